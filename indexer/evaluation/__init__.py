"""Offline evaluation, `lawindex eval`: what each way reaches against judged questions (`evaluate`), whether a
difference is more than chance (`significance`), the report as one HTML file (`html_report`), and the same on
`lawindex serve`'s page for a questions file on the server (`view`, installed by the CLI). Above the service (it
asks through an engine, and draws with the page's templates), below the CLI."""

__all__ = ["evaluate", "html_report", "significance", "view"]
