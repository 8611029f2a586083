"""What lawindex may say of a cluster to people: a URL without its credentials, and the short reason inside an
opensearch-py error. Apart from cluster/connection.py so that cluster/failover.py (which the
connection uses) says its errors the same way without importing the connection back."""

from __future__ import annotations

import re
from urllib.parse import urlsplit


def redacted(url: str) -> str:
    """`url` as it may be shown to people: without user-info."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return parts._replace(netloc=netloc).geturl()


def short_reason(error: Exception) -> str:
    """The short reason inside an opensearch-py error, without the request it came from."""
    from opensearchpy import exceptions as os_errors

    if isinstance(error, os_errors.ConnectionError):
        cause = error.info if isinstance(error.info, Exception) else None
        text = str(cause or error.error)
        # urllib3 wraps the OS's words in its own; the last clause is the one a person needs, without
        # OpenSSL's source line ("self-signed certificate (_ssl.c:1006)").
        text = re.sub(r"\s*\(_ssl\.c:\d+\)?", "", text)
        return text.rsplit(": ", 1)[-1].strip(" ')\"") or "no answer"
    if isinstance(error, os_errors.TransportError):
        info = error.info
        if isinstance(info, dict):
            cause = info.get("error", info)
            if isinstance(cause, dict):
                root = (cause.get("root_cause") or [cause])[0]
                return f"{root.get('type', 'error')}: {root.get('reason', '')}".strip(": ")
            return str(cause)
        return str(error.error)
    return str(error)
