"""Writing a state: `load` (the index body, the bulk fill, the lock, the generations and the alias swap) and
its history (`--keep`, `rollback`). Beside `read/`, never importing it (nor it this): how rows carry their vectors
is `cluster/vector_layout.py`'s."""

# The modules other packages import; fill, generations, index_body and mappings are load's own.
__all__ = ["history", "load", "lock", "stop"]
