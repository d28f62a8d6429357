"""Secrets never reach output: what the shared redaction removes and what it keeps."""

from __future__ import annotations

import json
import re

from hypothesis import given
from hypothesis import strategies as st

from conformance.core.redaction import (
    REDACTED,
    SECRET_FIELDS,
    names_a_secret_field,
    redact_headers,
    redact_text,
)


def test_signature_headers_are_redacted_and_the_key_id_kept() -> None:
    headers = redact_headers(
        {"X-Api-Key": "mk_test_alpha", "X-Signature": "ab12", "webhook-signature": "v1,x"}
    )
    assert headers == {
        "X-Api-Key": "mk_test_alpha",
        "X-Signature": REDACTED,
        "webhook-signature": REDACTED,
    }


def test_secret_json_fields_are_redacted_at_any_depth() -> None:
    body = json.dumps({"id": "we_1", "secret": "whsec_abc", "nested": [{"api_secret": "sk"}]})
    redacted = json.loads(redact_text(body))
    assert redacted == {"id": "we_1", "secret": REDACTED, "nested": [{"api_secret": REDACTED}]}


def test_webhook_secrets_are_redacted_in_standard_and_url_safe_base64() -> None:
    for secret in ("whsec_c2VjcmV0+/c2VjcmV0==", "whsec_c2Vj-cmV0_c2VjcmV0"):
        text = redact_text(f"rotated: {secret} done")
        assert text == f"rotated: {REDACTED} done"


def test_known_secret_strings_are_redacted_anywhere() -> None:
    assert redact_text("key sk_test_alpha_0123 in text", ["sk_test_alpha_0123"]) == (
        f"key {REDACTED} in text"
    )


# -- bodies are redacted in place: every other byte is what was on the wire ----------------------
def test_a_body_keeps_duplicate_keys_and_number_spellings() -> None:
    body = '{"a":1,"a":2,"n":1e999,"secret":"whsec_c2VjcmV0"}'
    assert redact_text(body) == '{"a":1,"a":2,"n":1e999,"secret":"[redacted]"}'


def test_a_body_keeps_its_layout() -> None:
    body = '{\n  "id" : "we_1",\n\t"secret"  :   "s3cr3t-value" ,\n  "n": 1.50\n}\n'
    assert redact_text(body) == (
        '{\n  "id" : "we_1",\n\t"secret"  :   "[redacted]" ,\n  "n": 1.50\n}\n'
    )


def test_a_secret_value_of_any_type_is_replaced_whole() -> None:
    body = '{"secret": {"k": [1, {"x": "y"}]}, "signature": 12345, "private_key": null, "z": 0}'
    assert redact_text(body) == (
        '{"secret": "[redacted]", "signature": "[redacted]", "private_key": "[redacted]", "z": 0}'
    )


def test_secret_values_with_escaped_quotes_go_entirely() -> None:
    body = r'{"secret": "a\"b\\\"c", "next": "kept"}'
    assert redact_text(body) == '{"secret": "[redacted]", "next": "kept"}'


def test_duplicate_secret_keys_and_arrays_of_secrets_all_go() -> None:
    body = '{"secret":"one","secret":"two","list":[{"api_secret":"x1"},{"API_SECRET":"x2"}]}'
    assert redact_text(body) == (
        '{"secret":"[redacted]","secret":"[redacted]",'
        '"list":[{"api_secret":"[redacted]"},{"API_SECRET":"[redacted]"}]}'
    )


def test_a_secret_key_spelt_with_escapes_is_still_a_secret_key() -> None:
    assert redact_text(r'{"secr\u0065t": "hidden-value"}') == r'{"secr\u0065t": "[redacted]"}'


def test_words_inside_string_values_are_not_keys() -> None:
    body = r'{"note": "{\"secret\": 1}", "secret_word": "secret"}'
    assert redact_text(body) == body


def test_a_body_cut_short_loses_the_secret_it_was_cut_in() -> None:
    assert redact_text('{"id":"we_1","secret":"abcdef') == '{"id":"we_1","secret":"[redacted]"'
    assert redact_text('{"id":1,"secret":{"a":"bc') == '{"id":1,"secret":"[redacted]"'


def test_text_that_is_not_json_is_left_alone_but_for_known_secrets() -> None:
    text = "<html>secret: plain</html> sk_known_0123"
    assert redact_text(text, ["sk_known_0123"]) == f"<html>secret: plain</html> {REDACTED}"


def test_deeply_nested_or_long_bodies_are_redacted_quickly() -> None:
    deep = "[" * 200_000 + '{"secret": "x"}' + "]" * 200_000
    assert redact_text(deep) == "[" * 200_000 + '{"secret": "[redacted]"}' + "]" * 200_000
    wide = "[" + "0," * 500_000 + '{"secret":"x"}]'
    assert redact_text(wide).endswith('0,{"secret":"[redacted]"}]')


# Letters that fold onto the ASCII ones of the field names: the long s, the Kelvin sign, dotted
# and dotless i, and the German sharp s, which folds to two letters.
_LOOKALIKES = "\u017f\u212a\u0130\u0131\u00df"


@given(
    st.lists(
        st.sampled_from(sorted(SECRET_FIELDS))
        | st.text(alphabet='secrtignaupvk_SECRTIGNAUPVK"= ' + _LOOKALIKES, max_size=12)
    ).map("".join)
)
def test_the_quick_secret_name_test_misses_no_name_a_case_insensitive_search_finds(
    text: str,
) -> None:
    # The scrubber skips its slow scans when this test says no: it must never say no wrongly.
    anywhere = re.compile("|".join(re.escape(f) for f in SECRET_FIELDS), re.IGNORECASE)
    if anywhere.search(text) or any(f in text.lower() for f in SECRET_FIELDS):
        assert names_a_secret_field(text)


def test_the_quick_secret_name_test_says_no_to_a_body_without_one() -> None:
    assert not names_a_secret_field('{"id": "pay_1", "amount": "10.00"}' + "\0" * 1000)
    assert names_a_secret_field('{"id": "we_1", "\u017fecret": "x"}')
