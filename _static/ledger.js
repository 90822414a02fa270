// The claims ledger's filters: by paper, chapter and verdict (rows carry paper-*, status-* classes and a chapter
// link in their Where cell), with a count of the rows shown.  Jupyter Book loads every script of _static on every page; this one acts
// only where the ledger table is.
document.addEventListener("DOMContentLoaded", () => {
  const table = document.querySelector("table.lorapriv-ledger");
  if (!table) { return; }
  const rows = Array.from(table.querySelectorAll(":scope > tbody > tr"));  // the claims, not their checks
  const value = (row, prefix) => (Array.from(row.classList).find(c => c.startsWith(prefix)) || "").slice(prefix.length);
  const chapter = row => ((row.querySelector("td.col-where .lorapriv-chapter-link") || {}).textContent || "").trim();
  const facets = [
    ["Paper", row => value(row, "paper-")],
    ["Chapter", chapter],
    ["Verdict", row => value(row, "status-").replace(/-/g, " ")],
  ];
  const bar = document.createElement("form");
  bar.className = "lorapriv-ledger-filters";
  const count = document.createElement("span");
  const selects = facets.map(([name, get]) => {
    const label = document.createElement("label");
    const select = document.createElement("select");
    select.setAttribute("aria-label", name);
    const options = ["all", ...new Set(rows.map(get).filter(Boolean))];
    options.forEach(o => { const opt = document.createElement("option"); opt.value = o; opt.textContent = o; select.append(opt); });
    label.append(name + " ", select);
    bar.append(label);
    return [select, get];
  });
  bar.append(count);
  const apply = () => {
    let shown = 0;
    rows.forEach(row => {
      const keep = selects.every(([select, get]) => select.value === "all" || get(row) === select.value);
      row.hidden = !keep;
      shown += keep;
    });
    count.textContent = `${shown} of ${rows.length} claims shown`;
  };
  selects.forEach(([select]) => select.addEventListener("change", apply));
  table.before(bar);
  apply();
});
