"""The endpoint lifecycle as a state machine (spec 6, profile 5: WH-001..WH-011).

The model holds, per endpoint the machine created (fresh ids per example), the url and event
types last written and every secret rotation returned. Rules put new endpoints, replace them,
put refused urls (plain http on a host that is not loopback, other schemes) and unknown event
types (422, and a re-read shows nothing changed), rotate secrets and list endpoints. Every
answer is compared with the model: the event types as given (unique, any order), ``active``
true, each endpoint listed once as last written, every rotated secret ``whsec_`` + base64 of
the profile's byte count and never one the endpoint had before.

Urls point at hosts that do not answer (``.invalid``, port 9 on loopback); at the end of an
example every endpoint is left subscribed to nothing, so that later events of the run do not
queue deliveries to it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, rule

from conformance.judge.outcomes import json_object
from conformance.judge.webhook_secrets import SecretRotations
from conformance.suite.factories import RequestSpec, locate_operation, send
from conformance.suite.stateful import ConformanceMachine, compact
from conformance.suite.webhooks.causes import listed_types
from conformance.suite.webhooks.signatures import secret_problem
from conformance.suite.wire.judged_call import JudgedCall

IDS = (
    "WH-001",
    "WH-002",
    "WH-003",
    "WH-004",
    "WH-005",
    "WH-006",
    "WH-007",
    "WH-008",
    "WH-009",
    "WH-010",
    "WH-011",
)
UNKNOWN_TYPE_FORMS = ("{t}.extra", "{T}", "conformance.unknown", "{t_}")
# Accepted urls fail at once when the server posts to them (nothing listens on port 9).
HTTPS_HOSTS = ("127.0.0.1:9", "localhost:9")
LOOPBACK_HOSTS = ("127.0.0.1:9", "localhost:9", "[::1]:9")
# Hosts that fail at once (no name): a server that wrongly accepts one must not be left
# trying to connect to it for the rest of the run.
FOREIGN_HTTP_HOSTS = ("hooks.conformance.invalid", "localhost.conformance.invalid")
OTHER_SCHEMES = ("ftp", "ws")


@dataclass
class Modelled:
    url: str
    event_types: list[str]


def _same_types(given: Any, expected: list[str]) -> bool:
    return isinstance(given, list) and sorted(map(str, given)) == sorted(expected)


class EndpointMachine(ConformanceMachine):
    endpoints = Bundle("endpoints")

    def __init__(self) -> None:
        super().__init__()
        self.model: dict[str, Modelled] = {}
        webhooks = self.ctx.profile.webhooks
        self.types = listed_types(self.ctx.profile)
        self.prefix = webhooks.secret_prefix
        self.secret_bytes = webhooks.secret_random_bytes
        self.rotations = SecretRotations()
        schemes = list(webhooks.url_schemes)
        self.accepted = [f"{s}://{h}" for s in schemes for h in HTTPS_HOSTS]
        self.refused = [
            f"{s}://hooks.conformance.invalid" for s in OTHER_SCHEMES if s not in schemes
        ]
        if "http" not in schemes:
            self.refused += [f"http://{h}" for h in FOREIGN_HTTP_HOSTS]
            loopback = [f"http://{h}" for h in LOOPBACK_HOSTS]
            if webhooks.loopback_http:
                self.accepted += loopback
            else:
                self.refused += loopback
        first = self.types[0] if self.types else "payment.created"
        forms = {
            form.format(t=first, T=first.upper(), t_=first.replace(".", "_"))
            for form in UNKNOWN_TYPE_FORMS
        }
        self.unknown_types = sorted(forms - set(self.types))

    # -- requests -----------------------------------------------------------------------------
    def spec(self, operation_id: str, **parts: Any) -> RequestSpec:
        method, template = locate_operation(self.ctx.contract, operation_id)
        return RequestSpec(operation_id, method, template, **parts)

    def put(self, endpoint_id: str, url: str, event_types: list[str]) -> httpx.Response:
        body = {"url": url, "event_types": event_types}
        spec = self.spec("putWebhookEndpoint", path_params={"id": endpoint_id}, body=body)
        return send(self.ctx.client, spec)

    def draw_types(self, data: st.DataObject) -> list[str]:
        return data.draw(st.lists(st.sampled_from(self.types), unique=True), label="event_types")

    def draw_url(self, data: st.DataObject, endpoint_id: str, urls: list[str]) -> str:
        base = data.draw(st.sampled_from(urls), label="url")
        return f"{base}/conformance/{endpoint_id}"

    def check_written(
        self, ids: list[str], response: httpx.Response, endpoint_id: str, url: str, types: list[str]
    ) -> None:
        success = self.ctx.profile.success_status("putWebhookEndpoint")
        self.verdicts.status(ids, response, success, f"put endpoint {endpoint_id}")
        body = json_object(response) or {}
        replacing = "WH-005" in ids  # new types not taken: a replace that did not replace
        self.verdicts.check(
            ["WH-005"] if replacing else ["WH-001"],
            _same_types(body.get("event_types"), types),
            f"put endpoint answered event_types {body.get('event_types')!r}, expected "
            f"{sorted(types)!r}",
        )
        self.verdicts.check(
            ["WH-002", *ids],
            body.get("active") is True,
            f"put endpoint answered active {body.get('active')!r}, expected true",
        )
        self.verdicts.check(
            ids,
            body.get("id") == endpoint_id and body.get("url") == url,
            f"put endpoint answered {compact(body)}, expected id {endpoint_id} and url {url}",
        )

    # -- rules ----------------------------------------------------------------------------------
    @rule(target=endpoints, data=st.data())
    def create(self, data: st.DataObject) -> str:
        endpoint_id = self.ctx.factories.unique("we_machine_")
        url = self.draw_url(data, endpoint_id, self.accepted)
        types = self.draw_types(data)
        self.step(f"put a new endpoint {endpoint_id}: {url} {types}")
        response = self.put(endpoint_id, url, types)
        self.check_written(["WH-004", "WH-007", "WH-009"], response, endpoint_id, url, types)
        self.model[endpoint_id] = Modelled(url, types)
        return endpoint_id

    @rule(endpoint_id=endpoints, data=st.data())
    def replace(self, endpoint_id: str, data: st.DataObject) -> None:
        url = self.draw_url(data, endpoint_id, self.accepted)
        types = self.draw_types(data)
        self.step(f"replace endpoint {endpoint_id}: {url} {types}")
        response = self.put(endpoint_id, url, types)
        self.check_written(["WH-005", "WH-007", "WH-009"], response, endpoint_id, url, types)
        self.model[endpoint_id].url = url
        self.model[endpoint_id].event_types = types

    @rule(data=st.data())
    def refuse_url(self, data: st.DataObject) -> None:
        if not self.refused:
            return
        endpoint_id = self.existing_or_fresh(data)
        url = self.draw_url(data, endpoint_id, self.refused)
        types = self.draw_types(data)
        self.step(f"put endpoint {endpoint_id} with the url {url}: refused")
        response = self.put(endpoint_id, url, types)
        self.unsubscribe_if_accepted(response, endpoint_id, url)
        call = JudgedCall(response, "putWebhookEndpoint", {"id": endpoint_id})
        self.ctx.refused(["WH-008"], call, "put with a refused url")
        self.compare_listing(["WH-008"], refused=endpoint_id)

    @rule(data=st.data())
    def refuse_event_type(self, data: st.DataObject) -> None:
        endpoint_id = self.existing_or_fresh(data)
        url = self.draw_url(data, endpoint_id, self.accepted)
        unknown = data.draw(st.sampled_from(self.unknown_types), label="unknown type")
        types = [*self.draw_types(data), unknown]
        self.step(f"put endpoint {endpoint_id} with the unknown event type {unknown!r}: refused")
        response = self.put(endpoint_id, url, types)
        self.unsubscribe_if_accepted(response, endpoint_id, url)
        call = JudgedCall(response, "putWebhookEndpoint", {"id": endpoint_id})
        self.ctx.refused(["WH-009"], call, "put with an unknown event type")
        self.compare_listing(["WH-009"], refused=endpoint_id)

    @rule(endpoint_id=endpoints)
    def rotate(self, endpoint_id: str) -> None:
        self.step(f"rotate the secret of endpoint {endpoint_id}")
        spec = self.spec("rotateWebhookEndpointSecret", path_params={"id": endpoint_id})
        response = send(self.ctx.client, spec)
        success = self.ctx.profile.success_status("rotateWebhookEndpointSecret")
        self.verdicts.status(["WH-003"], response, success, "rotate")
        body = json_object(response) or {}
        secret = body.get("secret")
        self.verdicts.check(
            ["WH-003"],
            body.get("id") == endpoint_id and isinstance(secret, str),
            f"rotate answered id {body.get('id')!r} and a secret of type "
            f"{type(secret).__name__}, expected id {endpoint_id} and a string",
        )
        problem = secret_problem(secret, self.prefix, self.secret_bytes)
        self.verdicts.check(["WH-010"], problem is None, f"rotated secret: {problem}")
        found = self.rotations.rotated("", endpoint_id, str(secret), also=("WH-003",))
        self.verdicts.findings([found], "rotate")

    @rule()
    def list_endpoints(self) -> None:
        self.step("list endpoints")
        self.compare_listing(["WH-006"])

    # -- helpers --------------------------------------------------------------------------------
    def unsubscribe_if_accepted(self, response: httpx.Response, endpoint_id: str, url: str) -> None:
        """A put that should have been refused and was not: leave that endpoint subscribed to
        nothing (an existing one keeps the state the model has), then judge."""
        if response.status_code >= 300:
            return
        self.step(f"(the put was accepted: put endpoint {endpoint_id} back)")
        modelled = self.model.get(endpoint_id)
        if modelled is not None:
            self.put(endpoint_id, modelled.url, modelled.event_types)
        else:
            self.put(endpoint_id, url, [])

    def existing_or_fresh(self, data: st.DataObject) -> str:
        known = sorted(self.model)
        existing: bool = data.draw(st.booleans(), label="existing endpoint")
        if known and existing:
            chosen: str = data.draw(st.sampled_from(known), label="endpoint")
            return chosen
        return self.ctx.factories.unique("we_machine_")

    def compare_listing(self, ids: list[str], refused: str | None = None) -> None:
        """The listing shows every modelled endpoint once, as last written, and no endpoint
        for an id whose only put was refused."""
        response = send(self.ctx.client, self.spec("listWebhookEndpoints"))
        success = self.ctx.profile.success_status("listWebhookEndpoints")
        self.verdicts.status(["WH-006"], response, success, "list endpoints")
        listed = (json_object(response) or {}).get("endpoints")
        items = [e for e in listed if isinstance(e, dict)] if isinstance(listed, list) else []
        by_id: dict[str, list[dict[str, Any]]] = {}
        for item in items:
            by_id.setdefault(str(item.get("id")), []).append(item)
        if refused is not None and refused not in self.model:
            self.verdicts.check(
                ids, refused not in by_id, f"the refused endpoint {refused} is listed"
            )
        for endpoint_id, modelled in self.model.items():
            found = by_id.get(endpoint_id, [])
            item = found[0] if len(found) == 1 else {}
            self.verdicts.check(
                [*ids, "WH-005", "WH-006"],
                len(found) == 1
                and item.get("url") == modelled.url
                and _same_types(item.get("event_types"), modelled.event_types),
                f"endpoint {endpoint_id} is listed {len(found)} time(s)"
                + (f" as {compact(item)}" if item else "")
                + f", expected once with url {modelled.url} and event_types "
                f"{sorted(modelled.event_types)}",
            )
            self.verdicts.check(
                ["WH-002"],
                all(isinstance(f.get("active"), bool) for f in found),
                f"endpoint {endpoint_id} is listed without a boolean active flag",
            )

    def teardown(self) -> None:
        for endpoint_id, modelled in self.model.items():
            try:
                self.put(endpoint_id, modelled.url, [])
            except Exception:  # best effort: subscribed to nothing, no delivery is queued
                return
