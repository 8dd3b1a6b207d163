"""How answers are shown, the same to the command line and the server: result tables and
their terminal views, relevance in words, the neighbourhood picture (SVG), the Atom feed and
the HTML digest of a watch.

The face is lazy (PEP 562): a name loads its own submodule on first use.
"""

from typing import TYPE_CHECKING

from openmsd.faces import lazy_face

if TYPE_CHECKING:
    from openmsd.present.feed import atom, digest_html, nothing_new
    from openmsd.present.neighbourhood import (
        STRONG_SIMILARITY,
        Neighbourhood,
        build_neighbourhood,
    )
    from openmsd.present.picture import FORMATS, LAYOUTS, Picture, draw, save, svg
    from openmsd.present.relevance import UNRATED, percent, ranked, ranked_locations
    from openmsd.present.view import (
        context_driver,
        driver_position,
        recommendations_table,
        recommendations_view,
        relevance_texts,
        results_table,
        results_view,
        shorten,
    )

__all__ = [
    "FORMATS",
    "LAYOUTS",
    "STRONG_SIMILARITY",
    "UNRATED",
    "Neighbourhood",
    "Picture",
    "atom",
    "build_neighbourhood",
    "context_driver",
    "digest_html",
    "draw",
    "driver_position",
    "nothing_new",
    "percent",
    "ranked",
    "ranked_locations",
    "recommendations_table",
    "recommendations_view",
    "relevance_texts",
    "results_table",
    "results_view",
    "save",
    "shorten",
    "svg",
]

__getattr__, __dir__ = lazy_face(__name__)
