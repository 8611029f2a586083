"""Writing a state: `load` (the index body, the bulk fill, the lock, the generations and the alias swap) and
its history (`--keep`, `rollback`). Above `read/`, whose meaning module also says how vectors are stored."""

# The modules other packages import; fill, generations, index_body and mappings are load's own.
__all__ = ["history", "load", "lock", "stop"]
