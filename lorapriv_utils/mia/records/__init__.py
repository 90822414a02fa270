"""The records of committed results (torch-free): their one reader and writer, the specs their keys digest, and
their status."""
