"""Writing a state: `load` (the index body, the bulk fill, the lock, the generations and the alias swap) and
its history (`--keep`, `rollback`). Above `read/`, whose meaning module also says how vectors are stored."""
