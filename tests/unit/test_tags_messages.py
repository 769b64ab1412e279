"""core.tags.messages: translated tag errors and the cheat sheet (issue 4)."""

from __future__ import annotations

import pytest

from core.errors import TagError
from core.tags import extract_rolls, parse_tag
from core.tags.messages import cheat_sheet, error_message


def error_of(body: str) -> TagError:
    with pytest.raises(TagError) as info:
        parse_tag(body)
    return info.value


def test_syntax_error_in_spanish_and_english() -> None:
    e = error_of("Destreza+Atletismo dif siete")
    assert error_message(e) == "no entiendo «siete» (carácter 24); se esperaba un número. ¿Quisiste decir `[tirada]Destreza+Atletismo dif 7[/tirada]`?"
    assert error_message(e, "en") == "cannot read 'siete' (character 24); expected number. Did you mean `[roll]Destreza+Atletismo dif 7[/roll]`?"


@pytest.mark.parametrize(
    "body, es",
    [
        ("5 dif 11", "la dificultad debe estar entre 2 y 10 (pone 11)"),
        ("99 +5", "demasiados dados (104; máximo 100)"),
        ('5 ext 10 "muro', 'falta cerrar las comillas de "muro'),
        ("dif 6", "faltan los dados: un número (5) o Rasgos (Destreza+Atletismo)"),
    ],
)
def test_spanish_messages(body: str, es: str) -> None:
    assert error_message(error_of(body), "es") == es


def test_too_many_tags_message() -> None:
    parsed = extract_rolls("[tirada]5[/tirada]" * 21)
    assert error_message(parsed[-1].error, "es") == (
        "demasiadas etiquetas en un mensaje: solo se tiran las 20 primeras")


def test_unknown_code_and_language_fall_back() -> None:
    e = TagError("x", code="something_new")
    assert error_message(e, "fr") == "etiqueta no válida (something_new)"


def test_cheat_sheet() -> None:
    es = cheat_sheet("es", "vampiro")
    assert "dif 7" in es and "fv" in es and "ext 10" in es
    assert "df 3" in cheat_sheet("es", "exaltado")
    assert "diff 7" in cheat_sheet("en", "vtm")
    # every example in the sheet is itself a valid tag
    for sheet in (es, cheat_sheet("en", "vampiro")):
        examples = list(extract_rolls(sheet.split("Examples:")[-1].split("Ejemplos:")[-1]))
        assert examples and all(p.spec is not None for p in examples)
