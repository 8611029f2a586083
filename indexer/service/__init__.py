"""What answers a user: the engines behind one interface (the reference, OpenSearch), the JSON models of
the output, and `lawindex serve`, the HTTP service."""

# The modules other packages import; the app's parts (routes, fast_ask, body_limit, responses, metrics) are serve's own.
__all__ = ["access_log", "client_limits", "engines", "eval", "output", "serve", "significance"]
