"""What answers a user: the engines behind one interface (the reference, OpenSearch), the JSON models of
the output, and `lawindex serve`, the HTTP service (and its page at `/`, `page`)."""

# The modules other packages import; the app's parts (routes, fast_ask, body_limit, responses, metrics) are serve's own.
# page: the HTML page serve's routes install at `/`, whose templates `lawindex eval --html` draws with too.
__all__ = ["access_log", "client_limits", "engines", "output", "page", "serve"]
