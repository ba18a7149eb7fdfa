"""The viewer's one write route (``watch --human``): a running debate's open question, and the
answer to it, handed to the debate through its folder (``human_channel``).

A loopback server is reachable from every page the browser has open, so a write must prove it
comes from the viewer's own page. Besides the host guard every request passes (DNS rebinding),
a POST needs an ``Origin`` that is the viewer's own (a missing one is refused) and the per-run
token the page carries in a meta tag, sent back in the ``X-Disputatio-Token`` header: another
site can make the browser POST here with the right ``Host``, but it can neither read the token
nor set that header without a preflight this server never grants.
"""

from __future__ import annotations

import asyncio
import hmac
import json
from pathlib import Path

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from disputatio import human_channel as channel
from disputatio.watch import feed as feeds

TOKEN_HEADER = "x-disputatio-token"
MAX_BODY = 64 * 1024


def routes(home: Path, port: int, token: str, answer) -> list[Route]:
    """``GET`` and ``POST /v1/debates/{id}/human``; ``answer(status, body)`` makes responses."""
    origins = {f"http://127.0.0.1:{port}", f"http://localhost:{port}"}

    def folder(request: Request) -> Path | None:
        path = feeds.debate_path(home, request.path_params["debate"])
        return path.parent if path is not None else None

    async def asked(request: Request) -> Response:
        where = folder(request)
        if where is None:
            return answer({"error": f"no debate {request.path_params['debate']!r}"}, 404)
        return answer({"question": await asyncio.to_thread(channel.open_question, where)})

    async def answered(request: Request) -> Response:
        if request.headers.get("origin") not in origins:
            return answer({"error": "an answer comes only from the viewer's own page"}, 403)
        if not hmac.compare_digest(request.headers.get(TOKEN_HEADER, "").encode(),
                                   token.encode()):
            return answer({"error": "missing or wrong X-Disputatio-Token"}, 403)
        where = folder(request)
        if where is None:
            return answer({"error": f"no debate {request.path_params['debate']!r}"}, 404)
        body = b""
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_BODY:
                return answer({"error": f"the answer is larger than {MAX_BODY} bytes"}, 413)
        try:
            sent = json.loads(body)
        except ValueError:
            return answer({"error": "the body is not JSON"}, 400)
        try:
            acted = await asyncio.to_thread(channel.deliver, where, sent)
        except channel.Closed as exc:
            return answer({"error": str(exc)}, 409)
        except channel.Invalid as exc:
            return answer({"error": str(exc)}, 400)
        # handed over: the ledger's human_acted says which answer came first
        return answer({"delivered": acted}, 202)

    return [Route("/v1/debates/{debate}/human", asked, methods=["GET"]),
            Route("/v1/debates/{debate}/human", answered, methods=["POST"])]
