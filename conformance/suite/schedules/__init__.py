"""The schedules family: subscriptions, payout schedules, splits and the split template.

Stateful checks of profile section 5 for the resources that live on after their create:

- payout schedules through every transition of the profile's state machine, allowed and
  refused, in generated orders (``payouts.PayoutScheduleMachine``) and once each in a fixed
  walk; ``enabled``, ``retired_at``, ``next_run_at``, ``updated_at`` and ``min_send_raw`` as the
  profile says; the business rules of a create and a replace (decimals, ``first_run_at``,
  withdraw addresses, deployments), each refusal followed by a re-read;
- subscriptions: create and cancel from every state, ``authorize_url``, ``next_bill_at``,
  ``currency_chain_id``, unknown currencies and chains (``subscriptions``);
- split shares on payments, subscriptions and x402 requirements, and the split template
  (``splits``).

Values come from the profile and the contract; nothing here names a default-profile constant.
"""
