"""``snowpy serve``'s web layer: a Starlette application over a :class:`Service`.

Routes: ``POST /predict`` (one document or many, probabilities, optional explanations),
``POST /learn`` (labelled feedback, learned online, durable before it is acknowledged),
``POST /forget`` (a label forgotten, durable alike), ``GET /health`` and ``GET /metrics``
(Prometheus text). Safe by default: request bodies and batches are bounded, bad JSON is
a 400 with a one-line reason, the model's work runs in a thread pool so a slow client or
a long batch does not stall the event loop, and ``/learn`` and ``/forget`` need the
bearer token when one is configured, and are refused without one when the service
listens beyond loopback.
"""

from __future__ import annotations

import contextlib
import hmac
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from snowpy.serving.service import Refused, Service

__all__ = ["make_app"]

LOOPBACK = ("127.0.0.1", "::1", "localhost")


def _json(payload: Any, status: int = 200) -> Response:
    return Response(orjson.dumps(payload, option=orjson.OPT_SERIALIZE_NUMPY), status,
                    media_type="application/json")


class _Bounds:
    """What a request may be: its body's size, its batch, and who may teach."""

    def __init__(self, token: str | None, host: str, max_body: int, max_batch: int) -> None:
        self.token, self.host, self.max_body, self.max_batch = token, host, max_body, max_batch
        self.open_learning = token is None and host in LOOPBACK

    async def body(self, request: Request) -> Any:
        declared = request.headers.get("content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.max_body):
            raise Refused(413, f"the request body is over {self.max_body:,} bytes")
        data = bytearray()
        async for chunk in request.stream():
            data += chunk
            if len(data) > self.max_body:
                raise Refused(413, f"the request body is over {self.max_body:,} bytes")
        try:
            return orjson.loads(bytes(data))
        except orjson.JSONDecodeError as exc:
            raise Refused(400, f"the body is not JSON: {exc}") from None

    def documents(self, body: Any) -> list[str]:
        if not isinstance(body, dict):
            raise Refused(400, 'the body must be a JSON object: {"text": ...} or '
                                '{"texts": [...]}')
        texts = [body["text"]] if "text" in body else body.get("texts")
        if not isinstance(texts, list) or not texts:
            raise Refused(400, 'give "text" (a string) or "texts" (a list of strings)')
        if len(texts) > self.max_batch:
            raise Refused(413, f"{len(texts):,} documents: at most {self.max_batch:,} a "
                                "request")
        if not all(isinstance(t, str) for t in texts):
            raise Refused(400, "every document must be a string")
        return texts

    def examples(self, body: Any) -> list[tuple[str, Any]]:
        if not isinstance(body, dict):
            raise Refused(400, 'the body must be a JSON object: {"text": ..., "label": ...} '
                                'or {"examples": [...]}')
        items = [body] if "text" in body else body.get("examples")
        if not isinstance(items, list) or not items:
            raise Refused(400, 'give "text" and "label", or "examples": [{"text", "label"}]')
        if len(items) > self.max_batch:
            raise Refused(413, f"{len(items):,} examples: at most {self.max_batch:,} a "
                                "request")
        out = []
        for i, item in enumerate(items):
            if not isinstance(item, dict) or not isinstance(item.get("text"), str) or \
                    not _is_label(item.get("label")):
                raise Refused(400, f"example {i}: needs a string \"text\" and a \"label\" "
                                    "(a string, an integer, or a list of them)")
            out.append((item["text"], item["label"]))
        return out

    def authorise(self, request: Request) -> None:
        if self.token is None:
            if not self.open_learning:
                raise Refused(403, f"learning is refused: the service listens on "
                                    f"{self.host}, beyond loopback, with no token (snowpy "
                                    "serve --token-file)")
            return
        given = request.headers.get("authorization", "")
        if not hmac.compare_digest(given.encode(), f"Bearer {self.token}".encode()):
            raise Refused(401, "learning needs the service's bearer token "
                                "(Authorization: Bearer ...)")


def make_app(service: Service, *, token: str | None = None, host: str = "127.0.0.1",
             max_body: int = 1 << 20, max_batch: int = 1000,
             on_stop: Callable[[], None] | None = None) -> Starlette:
    """The application serving ``service`` (see the module); ``on_stop()`` is called
    when it stops, after the service's last snapshot."""
    bounds = _Bounds(token, host, max_body, max_batch)

    async def predict(request: Request) -> Response:
        body = await bounds.body(request)
        texts = bounds.documents(body)
        top_k = body.get("top_k", 1)
        if not isinstance(top_k, int) or isinstance(top_k, bool) or top_k < 1:
            raise Refused(400, '"top_k" must be a positive integer')
        answers = await run_in_threadpool(service.predict, texts, top_k=top_k,
                                          explain=bool(body.get("explain", False)))
        return _json({"predictions": answers})

    async def learn(request: Request) -> Response:
        bounds.authorise(request)
        learned = await run_in_threadpool(service.learn,
                                          bounds.examples(await bounds.body(request)))
        return _json(learned)

    async def forget(request: Request) -> Response:
        bounds.authorise(request)
        body = await bounds.body(request)
        if not isinstance(body, dict) or not _is_label(body.get("label")) or \
                isinstance(body.get("label"), list):
            raise Refused(400, 'give the "label" to forget (a string or an integer)')
        return _json(await run_in_threadpool(service.forget, body["label"]))

    async def health(request: Request) -> Response:
        return _json(await run_in_threadpool(service.health))

    async def metrics(request: Request) -> Response:
        return PlainTextResponse(service.metrics.render(),
                                 media_type=service.metrics.content_type)

    def measured(endpoint: Any, route: str) -> Any:
        async def handler(request: Request) -> Response:
            began = time.perf_counter()
            try:
                response = await endpoint(request)
            except Refused as refused:
                response = _json({"error": refused.reason}, refused.status)
            service.metrics.request(route, response.status_code, time.perf_counter() - began)
            return response
        return handler

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        service.start()
        try:
            yield
        finally:
            await run_in_threadpool(service.close)
            if on_stop is not None:
                on_stop()

    return Starlette(routes=[
        Route("/predict", measured(predict, "/predict"), methods=["POST"]),
        Route("/learn", measured(learn, "/learn"), methods=["POST"]),
        Route("/forget", measured(forget, "/forget"), methods=["POST"]),
        Route("/health", measured(health, "/health"), methods=["GET"]),
        Route("/metrics", measured(metrics, "/metrics"), methods=["GET"]),
    ], lifespan=lifespan)


def _is_label(value: Any) -> bool:
    def one(x: Any) -> bool:
        return isinstance(x, (str, int)) and not isinstance(x, bool)
    return one(value) or (isinstance(value, list) and all(one(x) for x in value))
