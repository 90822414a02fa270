# lorapriv: `make book` renders the book, `make test` checks everything (see README.md).
PYTHON ?=
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.lorapriv-installed
export PYTHON VENV
# Notebooks (and the book) run at this scale; see book/running.md.
LORAPRIV_SCALE ?= cpu-small
export LORAPRIV_SCALE
# Notebooks draw with the kernel's inline backend: a backend forced from outside hides every figure.
unexport MPLBACKEND

# Strict build: a notebook that raises, any Sphinx warning, a broken reference or a missing
# citation fails it (nb_execution_raise_on_error is set in _config.yml).
JB_BUILD := $(BIN)/jupyter-book build . --builder html --warningiserror --nitpick --keep-going

.PHONY: status help setup book book-fresh book-validated artefacts-check test unit unit-fast unit-slow nbval lint browser-check screenshots notebooks notebook verify bench gpu-check results-a5 results-a6 results-a6-large results-a6-pretrained results-a6-projection results-a6-projection-pretrained results-a6-five-seeds results-a6-sgd-lora results-a6-lower-rate results-a6-frontier-seeds results-b1 results-b2 results-b3 lock clean

help:
	@echo "make book          render _build/html from the notebooks' committed (CI-validated) outputs, executing nothing"
	@echo "make book-fresh    execute every notebook here, store its outputs (make notebooks), then render them"
	@echo "make book-validated  the same as make book (CI's name for it, after make test)"
	@echo "make artefacts-check fail when the ledger or figure files differ from the committed ones"
	@echo "make test          lint, fast unit tests, notebook validation (nbval), then the slow unit tests"
	@echo "make browser-check open the built pages in headless Chromium and check them"
	@echo "make screenshots   the same, plus key pages at desktop and phone widths in _build/screenshots"
	@echo "make notebooks     sync the jupytext pairs and re-execute notebooks in place"
	@echo "make notebook NB=a3_noise   the same for one notebook"
	@python3 -m lorapriv_utils.catalogue 2>/dev/null || echo "make results-...  (python3 lists them)"
	@echo "make bench         performance ratios, measured side by side"
	@echo "make gpu-check     paper-scale training and scoring throughput on a CUDA machine (tokens/s, MFU)"
	@echo "make status        whether each committed result is the declared one and current (seconds)"
	@echo "make verify        recompute a declared subset from nothing and compare every number (its time: book/reproducing.md)"

$(STAMP): pyproject.toml requirements.lock requirements-pretrained.txt tools/bootstrap.py
	@command -v python3 >/dev/null || { echo "lorapriv setup: python3 not found; install Python 3.11+ with venv and pip" >&2; exit 2; }
	@python3 tools/bootstrap.py
	@touch $@

setup: $(STAMP)

# The book from the notebooks' stored outputs, executing nothing (about a minute; _config.yml): the outputs CI
# validates (its nbval step executes every notebook and compares its outputs with the stored ones).
book: $(STAMP)
	$(JB_BUILD)

book-validated: book

# Every notebook executed here by the one program that stores outputs (tools/execute_notebooks.py), then
# rendered from scratch; `git diff notebooks` shows what changed.
book-fresh: notebooks
	rm -rf _build/html _build/.doctrees
	$(JB_BUILD)

# What executing the notebooks writes (the ledger's verdicts, the figures) must be what is committed.
artefacts-check:
	@git diff --exit-code --stat -- ledger book/figures || { echo "the notebooks wrote ledger or figure files that differ from the committed ones: re-execute and commit them (make notebooks)" >&2; exit 1; }
	@untracked=$$(git ls-files --others --exclude-standard -- ledger book/figures); if [ -n "$$untracked" ]; then echo "the notebooks wrote files that are not committed: $$untracked" >&2; exit 1; fi

test: lint unit-fast nbval unit-slow

# The data folder is checked when it was given (DATA_DIR=... on the command line or in the environment: a wrong one is
# an error) or when the default one exists; otherwise Enron's and PubMed's data parts are left unchecked, as CI's are.
status: $(STAMP)
	$(BIN)/python -m lorapriv_utils status $(if $(filter command line environment,$(origin DATA_DIR)),--data-dir $(DATA_DIR),$(if $(wildcard $(DATA_DIR)/enron),--data-dir $(DATA_DIR)))

# The slow tier and the notebooks run on two workers, one thread in each (two cores' worth): two spinning
# thread pools on two cores slow both several times over.
ONE_THREAD := OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1

# the unit tests in two tiers: the fast ones first, so that a mistake shows in minutes; the slow tier
# (marked slow: over 5 s each) after the notebooks.  Each tier prints its 25 slowest tests, and the
# marker guard (tests/conftest.py) names any unmarked test over 5 s.
unit: unit-fast unit-slow

unit-fast: $(STAMP)
	$(BIN)/python -m pytest --durations=25 -m "not slow" tests

# The tests that launch several processes of their own run after the parallel part, alone: beside another
# worker their two gloo processes took five times as long.
unit-slow: $(STAMP)
	$(ONE_THREAD) $(BIN)/python -m pytest --durations=25 -m "slow and not distributed" -n 2 --dist loadscope tests
	$(ONE_THREAD) $(BIN)/python -m pytest --durations=5 -m "slow and distributed" tests

# Two workers, each notebook's cells on one (--dist loadscope, as nbval's README asks).
nbval: $(STAMP)
	$(ONE_THREAD) $(BIN)/python -m pytest --nbval --nbval-current-env --nbval-sanitize-with nbval_sanitize.cfg -p no:cacheprovider \
	  -n 2 --dist loadscope notebooks

lint: $(STAMP)
	$(BIN)/ruff check lorapriv_utils _ext tests tools notebooks
	$(BIN)/ruff format --check lorapriv_utils _ext tests tools

browser-check: $(STAMP)
	$(BIN)/python tools/check_html.py _build/html

screenshots: $(STAMP)
	$(BIN)/python tools/check_html.py _build/html --screenshots _build/screenshots

# One BLAS thread per kernel, as in nbval: beside a training run on the other core, b3 took 136 s at one
# thread and more than 23 minutes at two.
notebooks: $(STAMP)
	$(BIN)/jupytext --sync notebooks/*.py
	$(ONE_THREAD) $(BIN)/python tools/execute_notebooks.py notebooks/*.ipynb
	$(BIN)/jupytext --sync notebooks/*.ipynb

# §6's results under results/published/cpu-small: Table 1's grid (three seeds) and the frontier.
# Every command resumes and skips what is current; the frontier's extra rates widen the dense methods' grid.
results-a6: $(STAMP)
	$(BIN)/python -m lorapriv_utils run --methods full,frozenemb,adapter,lora --ranks 8,16 --seeds 0,1,2 --out results/published
	$(BIN)/python -m lorapriv_utils run --methods flora,dpsgd,rowscale --ranks 8 --seeds 0,1,2 --out results/published
	$(BIN)/python -m lorapriv_utils frontier --out results/published
	for lr in 1e-4 3e-5; do $(BIN)/python -m lorapriv_utils frontier --methods full,adapter --lr $$lr --out results/published; done
	for lr in 1e-5 3e-6; do $(BIN)/python -m lorapriv_utils frontier --methods full,adapter --datasets ptb --lr $$lr --out results/published; done
	for lr in 3e-4 1e-3; do $(BIN)/python -m lorapriv_utils frontier --methods lora --ranks 8,16 --lr $$lr --out results/published; done
	$(BIN)/python -m lorapriv_utils lira --methods full,adapter,lora --ranks 8,16 --seeds 0 --out results/published

# The projection arms of §6 (cpu-small, synthetic e-mails, six seeds): LoRA-FA r=8 with its random frozen A
# against the same training with a fixed DCT basis as A, with AdamW and with SGD (each its own rate grid).
PROJECTION = $(BIN)/python -m lorapriv_utils run --datasets synthetic-email --methods lorafa,lorafixed --ranks 8 --seeds 0,1,2,3,4,5 \
  --threads 1 --no-progress
results-a6-projection: $(STAMP)
	$(PROJECTION) --optimizer adamw --lr-grid 3e-3,1e-2,3e-2,1e-1 --out results/published/projection/adamw
	$(PROJECTION) --optimizer sgd --lr-grid 0.3,1,3 --out results/published/projection/sgd

# Table 1's grid at the larger CPU scale on the three real corpora (one seed), as two one-thread shards:
# Enron and PubMed are read from DATA_DIR (never copied into the repository).
DATA_DIR ?= ../shared/data
results-a6-large: $(STAMP)
	LORAPRIV_SCALE=cpu-large $(BIN)/python -c "from lorapriv_utils.mia.engine.models import pretrained_base; from lorapriv_utils.scale import current_scale; pretrained_base(current_scale(), progress=True)"
	pids=""; for i in 0 1; do \
	  $(BIN)/python -m lorapriv_utils run --scale cpu-large --methods full,adapter,lora --ranks 8,16 --seeds 0 \
	    --data-dir $(DATA_DIR) --out results/published --shard $$i/2 --threads 1 & pids="$$pids $$!"; \
	done; for p in $$pids; do wait $$p || exit 1; done

# Table 1's grid on the pretrained SmolLM2-135M (cpu-pretrained), resumable: seed 0 of full fine-tuning, LoRA
# r=8 and r=16 and adapter fine-tuning on Enron and PubMed, then their seed-1 cells, then Penn Treebank's
# (wall times: make status).
# The base model's perplexity and scores first, then two one-thread processes over the same cells: each
# takes the next cell the other does not hold.
# Its frontier (scored after epochs 1 and 2): LoRA r=8 and r=16 at the rates their grids chose, full fine-tuning at
# one rate and adapter fine-tuning at two, whose checkpoints reach LoRA's perplexity; seed 0 on Enron and PubMed, one
# one-thread process per corpus, then seed 1 of every method on both in two one-thread processes; then Penn
# Treebank's grid (both seeds) and frontier (one process per seed); then LoRA-FA r=8, adapter fine-tuning with SGD and
# the frozen-embedding control on all three (both seeds).
PRETRAINED_FRONTIER = $(BIN)/python -m lorapriv_utils frontier --scale cpu-pretrained --checkpoints 1,2 \
  --data-dir $(DATA_DIR) --out results/published --threads 1 --seeds
results-a6-pretrained: $(STAMP)
	$(BIN)/python -m lorapriv_utils frontier --scale cpu-pretrained --datasets ptb,enron,pubmed --bases-only \
	  --data-dir $(DATA_DIR) --out results/published --threads 2
	pids=""; for i in 0 1; do \
	  $(BIN)/python -m lorapriv_utils run --scale cpu-pretrained --datasets enron,pubmed --methods full,lora --ranks 8,16 \
	    --seeds 0 --data-dir $(DATA_DIR) --out results/published --threads 1 & pids="$$pids $$!"; \
	done; for p in $$pids; do wait $$p || exit 1; done
	$(BIN)/python -m lorapriv_utils run --scale cpu-pretrained --datasets enron,pubmed --methods adapter --seeds 0 \
	  --data-dir $(DATA_DIR) --out results/published --threads 1
	pids=""; for i in 0 1; do \
	  ( $(BIN)/python -m lorapriv_utils run --scale cpu-pretrained --datasets pubmed --methods adapter,full,lora --ranks 8,16 \
	      --seeds 1 --data-dir $(DATA_DIR) --out results/published --threads 1 && \
	    $(BIN)/python -m lorapriv_utils run --scale cpu-pretrained --datasets enron --methods adapter,full,lora --ranks 8,16 \
	      --seeds 1 --data-dir $(DATA_DIR) --out results/published --threads 1 ) & pids="$$pids $$!"; \
	done; for p in $$pids; do wait $$p || exit 1; done
	( $(PRETRAINED_FRONTIER) 0 --datasets enron --methods lora --ranks 8 --lr 1e-2 && \
	  $(PRETRAINED_FRONTIER) 0 --datasets enron --methods full --lr 1e-4 && \
	  for lr in 1e-3 3e-3; do $(PRETRAINED_FRONTIER) 0 --datasets enron --methods adapter --lr $$lr || exit 1; done && \
	  $(PRETRAINED_FRONTIER) 0 --datasets enron --methods lora --ranks 16 --lr 1e-2 ) & a=$$!; \
	( $(PRETRAINED_FRONTIER) 0 --datasets pubmed --methods lora --ranks 8 --lr 3e-3 && \
	  $(PRETRAINED_FRONTIER) 0 --datasets pubmed --methods full --lr 1e-4 && \
	  for lr in 3e-4 1e-4; do $(PRETRAINED_FRONTIER) 0 --datasets pubmed --methods adapter --lr $$lr || exit 1; done && \
	  $(PRETRAINED_FRONTIER) 0 --datasets pubmed --methods lora --ranks 16 --lr 1e-3 ) & b=$$!; \
	wait $$a && wait $$b
	( $(PRETRAINED_FRONTIER) 1 --datasets enron --methods lora --ranks 8 --lr 1e-2 && \
	  $(PRETRAINED_FRONTIER) 1 --datasets enron --methods adapter --lr 1e-3 && \
	  $(PRETRAINED_FRONTIER) 1 --datasets pubmed --methods lora --ranks 8 --lr 3e-3 && \
	  $(PRETRAINED_FRONTIER) 1 --datasets pubmed --methods adapter --lr 3e-4 && \
	  $(PRETRAINED_FRONTIER) 1 --datasets enron --methods lora --ranks 16 --lr 1e-2 ) & a=$$!; \
	( $(PRETRAINED_FRONTIER) 1 --datasets enron --methods full --lr 1e-4 && \
	  $(PRETRAINED_FRONTIER) 1 --datasets enron --methods adapter --lr 3e-3 && \
	  $(PRETRAINED_FRONTIER) 1 --datasets pubmed --methods full --lr 1e-4 && \
	  $(PRETRAINED_FRONTIER) 1 --datasets pubmed --methods adapter --lr 1e-4 && \
	  $(PRETRAINED_FRONTIER) 1 --datasets pubmed --methods lora --ranks 16 --lr 1e-3 ) & b=$$!; \
	wait $$a && wait $$b
	pids=""; for i in 0 1; do \
	  $(BIN)/python -m lorapriv_utils run --scale cpu-pretrained --datasets ptb --methods full,adapter,lora --ranks 8,16 \
	    --seeds 0,1 --data-dir $(DATA_DIR) --out results/published --threads 1 & pids="$$pids $$!"; \
	done; for p in $$pids; do wait $$p || exit 1; done
	pids=""; for s in 0 1; do \
	  ( $(PRETRAINED_FRONTIER) $$s --datasets ptb --methods lora --ranks 8 --lr 3e-3 && \
	    $(PRETRAINED_FRONTIER) $$s --datasets ptb --methods full --lr 1e-4 && \
	    for lr in 1e-3 3e-4; do $(PRETRAINED_FRONTIER) $$s --datasets ptb --methods adapter --lr $$lr || exit 1; done && \
	    $(PRETRAINED_FRONTIER) $$s --datasets ptb --methods lora --ranks 16 --lr 3e-3 ) & pids="$$pids $$!"; \
	done; for p in $$pids; do wait $$p || exit 1; done
	pids=""; for i in 0 1; do \
	  $(BIN)/python -m lorapriv_utils run --scale cpu-pretrained --datasets enron,pubmed,ptb --methods lorafa,adaptersgd,frozenemb \
	    --ranks 8 --seeds 0,1 --data-dir $(DATA_DIR) --out results/published --threads 1 & pids="$$pids $$!"; \
	done; for p in $$pids; do wait $$p || exit 1; done

# The analysis plan's five-seed extension (ledger/analysis_plan.yml, version 1, run five-seeds): seeds 2-4 of Table 1's
# grid on the pretrained SmolLM2-135M, each method and corpus at the rate its seed-0 sweep chose (no sweep), one
# one-thread process, into results/pending until §6 reads them (resumable: rerun the same command).
FIVE_SEEDS = $(BIN)/python -m lorapriv_utils run --scale cpu-pretrained --seeds 2,3,4 --data-dir $(DATA_DIR) \
  --out results/pending --threads 1 --no-progress
results-a6-five-seeds: $(STAMP)
	$(FIVE_SEEDS) --datasets enron --methods lora --ranks 8 --lr 1e-2
	$(FIVE_SEEDS) --datasets enron --methods full --lr 3e-4
	$(FIVE_SEEDS) --datasets pubmed --methods lora --ranks 8 --lr 3e-3
	$(FIVE_SEEDS) --datasets pubmed --methods full --lr 1e-4
	$(FIVE_SEEDS) --datasets ptb --methods lora --ranks 8 --lr 3e-3
	$(FIVE_SEEDS) --datasets ptb --methods full --lr 3e-4
	$(FIVE_SEEDS) --datasets enron --methods adapter --lr 3e-3
	$(FIVE_SEEDS) --datasets pubmed --methods adapter --lr 3e-4
	$(FIVE_SEEDS) --datasets ptb --methods adapter --lr 1e-3
	$(FIVE_SEEDS) --datasets enron --methods lora --ranks 16 --lr 1e-2
	$(FIVE_SEEDS) --datasets pubmed --methods lora --ranks 16 --lr 1e-3
	$(FIVE_SEEDS) --datasets ptb --methods lora --ranks 16 --lr 3e-3

# The analysis plan's other two runs (version 2), into results/pending until §6 reads them, each resumable:
# sgd-lora, LoRA r=8 trained with paper A's SGD beside the SGD adapter (its own folder: never beside the AdamW
# records), its rate swept per seed over the SGD adapter's widened grid; lower-rate, every method of Table 1 at a
# tenth of the rate its seed-0 Enron sweep chose, with the base model's scores of seeds 2-4 for the base-reference
# attack beside eq. 24's.
SGD_LORA = $(BIN)/python -m lorapriv_utils run --scale cpu-pretrained --methods lora --ranks 8 --optimizer sgd \
  --lr-grid 0.01,0.03,0.1,0.3,1,3 --seeds 0,1 --data-dir $(DATA_DIR) --out results/pending/optimizer/sgd \
  --threads 1 --no-progress
results-a6-sgd-lora: $(STAMP)
	$(SGD_LORA) --datasets enron
	$(SGD_LORA) --datasets pubmed
	$(SGD_LORA) --datasets ptb
TENTH = $(BIN)/python -m lorapriv_utils run --scale cpu-pretrained --datasets enron --seeds 0,1,2,3,4 \
  --data-dir $(DATA_DIR) --out results/pending/regime/tenth --threads 1 --no-progress
results-a6-lower-rate: $(STAMP)
	$(BIN)/python -m lorapriv_utils frontier --scale cpu-pretrained --datasets enron --bases-only --seeds 2,3,4 \
	  --data-dir $(DATA_DIR) --out results/pending --threads 1 --no-progress
	$(TENTH) --methods lora --ranks 8,16 --lr 1e-3
	$(TENTH) --methods full --lr 3e-5
	$(TENTH) --methods adapter --lr 3e-4

# The analysis plan's frontier-seeds (version 3): A-6.attribution's pair, full fine-tuning and LoRA r=8, on the
# pretrained frontier for seeds 2-4 at seeds 0-1's rates and checkpoints, with the base model's scores (the bases of
# all three corpora, which the lower-rate regime's Enron shares); into results/pending, resumable.
FRONTIER_SEEDS = $(BIN)/python -m lorapriv_utils frontier --scale cpu-pretrained --checkpoints 1,2 --seeds 2,3,4 \
  --data-dir $(DATA_DIR) --out results/pending --threads 1 --no-progress
results-a6-frontier-seeds: $(STAMP)
	$(BIN)/python -m lorapriv_utils frontier --scale cpu-pretrained --datasets ptb,enron,pubmed --bases-only \
	  --seeds 2,3,4 --data-dir $(DATA_DIR) --out results/pending --threads 1 --no-progress
	$(FRONTIER_SEEDS) --datasets enron --methods full --lr 1e-4
	$(FRONTIER_SEEDS) --datasets enron --methods lora --ranks 8 --lr 1e-2
	$(FRONTIER_SEEDS) --datasets pubmed --methods full --lr 1e-4
	$(FRONTIER_SEEDS) --datasets pubmed --methods lora --ranks 8 --lr 3e-3
	$(FRONTIER_SEEDS) --datasets ptb --methods full --lr 1e-4
	$(FRONTIER_SEEDS) --datasets ptb --methods lora --ranks 8 --lr 3e-3

# §6's projection arm on the pretrained SmolLM2-135M: LoRA-FA r=8 with its random frozen A against the fixed DCT
# basis as A, AdamW, Enron, seeds 0 and 1, one one-thread process per seed.
PRE_PROJECTION = $(BIN)/python -m lorapriv_utils run --scale cpu-pretrained --datasets enron --methods lorafa,lorafixed \
  --ranks 8 --optimizer adamw --lr-grid 1e-3,3e-3,1e-2,3e-2,1e-1 --data-dir $(DATA_DIR) \
  --out results/published/projection/adamw --threads 1 --no-progress
results-a6-projection-pretrained: $(STAMP)
	pids=""; for s in 0 1; do $(PRE_PROJECTION) --seeds $$s & pids="$$pids $$!"; done; \
	for p in $$pids; do wait $$p || exit 1; done

# The canary audit's fixed design (a5_row_scaling.AUDIT_DESIGN, which refuses records of any other): synthetic
# e-mails, seeds 1 to 3, 300 canaries, 40 guesses on each side, 16 epochs; full fine-tuning also at a lower rate
# chosen before its runs (a5_row_scaling.FIXED_FULL_LR, a test holds the two equal).
AUDIT = LORAPRIV_SCALE=cpu-small $(BIN)/python -m lorapriv_utils audit --datasets synthetic-email --canaries 300 \
  --guesses 40 --epochs 16 --seeds 1,2,3 --out results/published

results-a5: $(STAMP)
	LORAPRIV_SCALE=cpu-small $(BIN)/python -m lorapriv_utils multiplier results/published/multiplier/cpu-small-pretrained.json
	$(AUDIT) --methods full
	$(AUDIT) --methods full --lr 3e-5
	$(AUDIT) --methods rowscale,dpsgd --ranks 8 --noise-multiplier 0.034020690871988585
	$(AUDIT) --methods lora --ranks 8
	$(AUDIT) --methods dpsgd --ranks 8
	LORAPRIV_SCALE=cpu-small $(BIN)/python -m lorapriv_utils cost results/published/bench/rowscale_cost.json
	LORAPRIV_SCALE=cpu-large $(BIN)/python -m lorapriv_utils cost results/published/bench/rowscale_cost_cpu-large.json

results-b1: $(STAMP)
	LORAPRIV_SCALE=cpu-small $(BIN)/python -m lorapriv_utils alignment results/published/alignment/cpu-small-pretrained.json

# The DP game, ranks 1 and 64 in one one-thread process and rank 8 in the other; each finished rank is kept in
# results/work/whitebox (a stopped run resumes from the ranks it finished, under the same code) and the process
# that finds every rank writes the record.
results-b2: $(STAMP)
	pids=""; for ranks in 1,64 8; do \
	  LORAPRIV_SCALE=cpu-small $(BIN)/python -m lorapriv_utils whitebox results/published/whitebox/cpu-small.json \
	    --ranks $$ranks --parts results/work/whitebox --threads 1 & pids="$$pids $$!"; \
	done; for p in $$pids; do wait $$p || exit 1; done

results-b3: $(STAMP)
	pids=""; for i in 0 1; do \
	  LORAPRIV_SCALE=cpu-small $(BIN)/python -m lorapriv_utils dp-compare --out results/published \
	    --seeds 0,1 --shard $$i/2 --threads 1 & pids="$$pids $$!"; \
	done; for p in $$pids; do wait $$p || exit 1; done

notebook: $(STAMP)
	@test -n "$(NB)" || { echo "usage: make notebook NB=a3_noise" >&2; exit 2; }
	$(BIN)/jupytext --sync notebooks/$(NB).py
	$(ONE_THREAD) $(BIN)/python tools/execute_notebooks.py notebooks/$(NB).ipynb
	$(BIN)/jupytext --sync notebooks/$(NB).ipynb

# Recompute a declared subset from nothing (a theory chapter's Monte Carlo checks, a cpu-small cell and a
# pretrained cell on Penn Treebank) and compare every number with the committed one (tools/verify.py).
verify: $(STAMP)
	$(BIN)/python tools/verify.py

bench: $(STAMP)
	$(BIN)/python tools/bench.py

# paper-scale throughput on a CUDA machine (GPT-2 117M's architecture, bf16, 8 x 1,024 tokens): a JSON record
gpu-check: $(STAMP)
	$(BIN)/python tools/gpu_check.py


lock: $(STAMP)
	$(BIN)/python -m pip freeze --exclude-editable | grep -v -E '^(pip|setuptools|wheel)==' | sed 's/+cpu$$//' > requirements.lock.new
	@echo "review requirements.lock.new, keep its header comment, and move it over requirements.lock"

clean:
	rm -rf _build .pytest_cache
