"""Whether a GET of the change feed asks for the live stream or the JSON page, read from its
`Accept` as RFC 9110 (12.5.1) says: media types match whatever their case, `q` weighs each one,
and `q=0` means not acceptable. An SSE client (a browser's `EventSource`) sends
`Accept: text/event-stream`; the stream is chosen when it weighs at least as much as JSON.
One reading for the route (`routes/events.py`) and the stall guard (`stalls.py`)."""

import re

STREAM = "text/event-stream"
# What the page answers in, most specific first: the first one `Accept` names is its weight.
PAGE_TYPES = ("application/json", "application/*", "*/*")
# RFC 9110's qvalue; anything else is read as no weight given (1), as a lenient parser does.
QVALUE = re.compile(r"0(\.[0-9]{0,3})?|1(\.0{0,3})?")


def _weights(accept: str) -> dict[str, float]:
    weights: dict[str, float] = {}
    for item in accept.split(","):
        media, *parameters = item.split(";")
        media = media.strip().lower()
        if not media:
            continue
        weight = 1.0
        for parameter in parameters:
            name, _, value = parameter.partition("=")
            if name.strip().lower() == "q" and QVALUE.fullmatch(value.strip()):
                weight = float(value.strip())
        weights[media] = max(weight, weights.get(media, 0.0))
    return weights


def wants_stream(accept: str | None) -> bool:
    """True when `Accept` (every Accept header, joined with commas) takes the event stream, with
    a weight above 0 and no lower than the JSON page's."""
    if not accept:
        return False
    weights = _weights(accept)
    stream = weights.get(STREAM, 0.0)
    page = next((weights[media] for media in PAGE_TYPES if media in weights), 0.0)
    return stream > 0 and stream >= page
