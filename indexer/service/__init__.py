"""What answers a user: the engines behind one interface (the reference, OpenSearch), the JSON models of
the output, and `lawindex serve`, the HTTP service."""
