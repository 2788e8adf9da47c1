"""``GET /api/export/html?<view state>``: the dashboard's "Save as HTML". The query is the
page's own URL state (``off``, ``runFilter``, ``tags``, ``smoothing``, ...; see
:func:`visualdl.report.selection_from_query`), and the answer is the same file that
``visualdl export --format html`` writes, built by the same code from the served data."""

from __future__ import annotations

from flask import Blueprint, Response, request

from visualdl.api.common import provider
from visualdl.api.errors import ApiError
from visualdl.report import ReportError, build_report, selection_from_query

__all__ = ["blueprint"]

blueprint = Blueprint("export_html", __name__)

FILENAME = "visualdl-report.html"


@blueprint.get("/api/export/html")
def export_html() -> Response:
    """The report of what the query selects, as an attachment; 400 naming bad input."""
    data = provider()
    try:
        selection = selection_from_query(request.args.to_dict(flat=False))
        with data.serving():
            page = build_report(data, selection)
    except ReportError as err:
        raise ApiError(400, str(err)) from None
    except KeyError as err:  # a run or tag gone between listing and reading (a reload)
        raise ApiError(409, f"the logs changed while the report was made ({err}); "
                            "ask again") from None
    response = Response(page, mimetype="text/html")
    response.headers["Content-Disposition"] = f'attachment; filename="{FILENAME}"'
    response.headers["Cache-Control"] = "no-store"
    return response
