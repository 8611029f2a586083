"""Offline evaluation, `lawindex eval`: what each way reaches against judged questions (`evaluate`), whether a
difference is more than chance (`significance`), and the report as one HTML file (`html_report`). Above the
service (it asks through an engine, and draws with the page's templates), below the CLI."""

__all__ = ["evaluate", "html_report", "significance"]
