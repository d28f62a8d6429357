"""The webhooks family: endpoints, secrets, events and deliveries at a live receiver.

- ``receiver``: the HTTP receiver the suite runs in a background thread (loopback unless
  ``--webhook-bind`` says otherwise); it records the requests within its bounds (the rest
  dropped and counted) and answers per path.
- ``signatures``: delivery signatures as the profile declares them (Standard Webhooks by
  default, ``[webhooks.signing]``, or a ``webhooks.verifier`` hook) and the secret format.
- ``causes``: which action of the suite causes which event type (``[webhooks.emits]``).
- ``endpoints``: the state machine of the endpoint lifecycle (put, replace, rotate, list).
- ``deliveries``: the delivery scenario (every event type, signatures, delivery records,
  a failing receiver path, resend, replays that must not emit twice).
"""
