"""Issue 26, «the tag language as players write it»: every spelling of the issue, read as the
player plainly means it, or refused with a message that shows the corrected tag.

Each case asserts real values (pool, ratings, difficulty, Willpower, extended name and target,
modifier, actions, successes) or the exact corrected tag in the reply's sentence.
"""

from __future__ import annotations

import pytest

from core.errors import StateError, TagError
from core.messages import error_message as state_message
from core.post.resolve import state_refusal
from core.sheetpool import resolve_pool
from core.sheets import imported_sheet, parse_sheets
from core.tags import ExtendedSpec, RollSpec, corrected_tag, parse_tag
from core.tags.messages import error_message, with_suggestion


def refused(body: str, ruleset_id: str = "vampiro") -> TagError:
    with pytest.raises(TagError) as info:
        parse_tag(body, ruleset_id=ruleset_id)
    return info.value


def sheet(**traits):
    """Koi's sheet with ``attributes`` / ``abilities`` blocks (docs/sheets.md)."""
    (koi,) = parse_sheets({"characters": [{"name": "Koi", "owner": "rebecca", **traits}]})
    return imported_sheet("koi", koi, None)


KOI = {"attributes": {"Destreza": 3, "Astucia": 2}, "abilities": {"Atletismo": 2, "Sigilo": 4}}


# ---- the whole list, in one table --------------------------------------------------------------


def reading(body: str, ruleset_id: str = "vampiro") -> RollSpec | str:
    """What Koi's player gets for ``[tirada]body[/tirada]``: the parsed tag when it parses and
    resolves against Koi's sheet, else the reply's refusal sentence (``error_message`` /
    ``state_refusal``, the functions the reply uses)."""
    try:
        spec = parse_tag(body, ruleset_id=ruleset_id)
    except TagError as err:
        return error_message(err)
    try:
        resolve_pool(sheet(**KOI), spec)
    except StateError as err:
        return state_refusal(err, f"[tirada]{body}[/tirada]", "es", ruleset_id)
    return spec


DA = ("Destreza", "Atletismo")

#: Every spelling issue 26 lists ("The tag language as players write it") and those its audit
#: added: (body, ruleset, the meant reading as RollSpec fields, or the corrected tag the
#: refusal shows).
SPELLINGS = [
    ("Destreza+Atletismo dific. 7", "vampiro", {"traits": DA, "difficulty": 7}),
    ("Destreza+Atletismo a dificultad 7", "vampiro", {"traits": DA, "difficulty": 7}),
    ("Destreza+Atletismo contra dificultad 7", "vampiro", {"traits": DA, "difficulty": 7}),
    ("Destreza+Atletismo con FV", "vampiro", {"traits": DA, "willpower": True}),
    ("Destreza+Atletismo con especialidad", "vampiro", {"traits": DA, "specialty": True}),
    ("Destreza+Atletismo espec.", "vampiro", {"traits": DA, "specialty": True}),
    ("Destreza 3 + Atletismo 2 dif 7", "vampiro", {"traits": DA, "trait_ratings": (3, 2), "difficulty": 7}),
    ("Destreza+Atletismo ext 10 muro", "vampiro", {"traits": DA, "extended": ExtendedSpec(10, "muro")}),
    ("Destreza+Atletismo oculta", "vampiro", {"traits": DA, "secret": True}),
    ("Destreza+Atletismo -2 por heridas", "vampiro", {"traits": DA, "modifier": -2, "comment": "-2 por heridas"}),
    ("5 1 FV", "vampiro", {"pool": 5, "willpower": True, "modifier": 0}),
    ("5d10>7", "vampiro", {"pool": 5, "difficulty": 7}),
    ("5 necesita 3 éxitos", "vampiro", {"pool": 5, "successes_required": 3}),
    ("Destreza+Atletismo 3 acciones", "vampiro", {"traits": DA, "actions": 3, "trait_ratings": ()}),
    ("Dificultad 7: Destreza+Atletismo", "vampiro", {"traits": DA, "difficulty": 7, "comment": ""}),
    ("cinco dados", "vampiro", {"pool": 5}),
    ("Des+Atl dif 7", "vampiro", "[tirada]Destreza+Atletismo dif 7[/tirada]"),
    ("Destresa+Atletismo dif 7", "vampiro", "[tirada]Destreza+Atletismo dif 7[/tirada]"),
    ("Destreza+Atletismo dif siete", "vampiro", "[tirada]Destreza+Atletismo dif 7[/tirada]"),
    ("Destreza+Atletismo 2", "vampiro", "[tirada]Destreza+Atletismo +2[/tirada]"),
    ("ext 10 Destreza+Atletismo dif 7", "vampiro", "[tirada]Destreza+Atletismo dif 7 ext 10[/tirada]"),
    ("5 2 FV", "vampiro", "[tirada]5 FV[/tirada]"),
    ("5d10>8", "exaltado", "[tirada]5d10[/tirada]"),
    # the audit's misleading refusals
    ("Destreza+Atletismo FV 1", "vampiro", "[tirada]Destreza+Atletismo FV[/tirada]"),
    ("Destreza+Atletismo 2 FV", "vampiro", "[tirada]Destreza+Atletismo FV[/tirada]"),
    ("3 acciones Destreza+Atletismo", "vampiro", "[tirada]Destreza+Atletismo acciones 3[/tirada]"),
    ("Destreza+Atletismo con 1 FV", "vampiro", "[tirada]Destreza+Atletismo con FV[/tirada]"),
    ("Destreza+Atletismo 5 dados", "vampiro", "[tirada]Destreza+Atletismo +5 dados[/tirada]"),
    # a Willpower word joined to a trait (vampiro «Puntuaciones»)
    ("Destreza y Voluntad", "vampiro", "[tirada]Destreza fv[/tirada]"),
    ("FV+Destreza", "vampiro", "[tirada]Destreza fv[/tirada]"),
    ("Destreza + FV", "vampiro", "[tirada]Destreza fv[/tirada]"),
    ("Voluntad y Destreza", "vampiro", "[tirada]Destreza fv[/tirada]"),
]


@pytest.mark.parametrize(("body", "ruleset_id", "meant"), SPELLINGS)
def test_every_spelling_is_read_as_meant_or_refused_with_the_corrected_tag(body, ruleset_id, meant) -> None:
    got = reading(body, ruleset_id)
    if isinstance(meant, dict):
        assert isinstance(got, RollSpec), f"{body!r}: {got}"
        assert {k: getattr(got, k) for k in meant} == meant, body
        return
    assert isinstance(got, str), f"{body!r} was read as {got}"
    assert f"¿Quisiste decir `{meant}`?" in got, got
    assert "+2 FV" not in got  # never a suggestion that changes the meaning
    fixed = reading(meant[len("[tirada]"):-len("[/tirada]")], ruleset_id)
    assert isinstance(fixed, RollSpec), f"the suggestion {meant} is refused too: {fixed}"


# ---- read as meant ---------------------------------------------------------------------------


def test_trait_with_its_rating_written_inline_is_the_rating() -> None:
    """vampiro-reglas.txt «Puntuaciones»: "Por cada punto que tenga tu personaje en un Rasgo en
    particular, puedes tirar un dado"; "Destreza 3 + Atletismo 2" is 3 + 2 = 5 dice."""
    spec = parse_tag("Destreza 3 + Atletismo 2 dif 7")
    assert spec.traits == ("Destreza", "Atletismo") and spec.trait_ratings == (3, 2)
    assert spec.difficulty == 7 and spec.pool is None
    assert resolve_pool(None, spec).pool == 5  # no sheet: the written ratings are the pool
    assert resolve_pool(sheet(**KOI), spec).pool == 5  # the sheet agrees
    assert parse_tag("Destreza(3)+Atletismo(2) dif 7") == spec  # the same as the bracketed spelling


def test_with_a_sheet_the_sheet_wins_and_a_different_written_rating_is_refused() -> None:
    """docs/decisions.md, issue 26: the sheet is the record; a written rating must match it."""
    with pytest.raises(StateError) as info:
        resolve_pool(sheet(**KOI), parse_tag("Destreza 4 + Atletismo 2"))
    assert info.value.code == "rating_mismatch"
    assert state_message(info.value) == "Koi tiene Destreza 3, no 4"


def test_extended_action_with_an_unquoted_name() -> None:
    spec = parse_tag("Inteligencia+Ciencia ext 10 muro cada 4h")
    assert spec.extended == ExtendedSpec(target=10, name="muro", interval_seconds=4 * 3600)
    assert spec.traits == ("Inteligencia", "Ciencia")
    assert parse_tag('5 ext 10 "muro"').extended == parse_tag("5 ext 10 muro").extended


def test_a_dice_penalty_with_its_reason() -> None:
    """exaltado-reglas.txt: the Storyteller "podría por ejemplo haber sustraído cuatro dados de
    la reserva de dados"; the reason is echoed with the comment, the dice are -2."""
    spec = parse_tag("Destreza+Atletismo -2 por heridas dif 6")
    assert spec.modifier == -2 and spec.difficulty == 6 and spec.traits == ("Destreza", "Atletismo")
    assert spec.comment == "-2 por heridas"
    assert parse_tag("7 -2 dados por heridas # salto").comment == "-2 dados por heridas; salto"
    assert resolve_pool(None, parse_tag("7 -2 por heridas")).pool == 5


def test_one_willpower_point_written_after_the_pool() -> None:
    """vampiro-reglas.txt «Éxitos Automáticos»: "gastar un punto de Fuerza de Voluntad. Esto solo
    puede hacerse una vez por turno"; "5 1 FV" is 5 dice and that point."""
    spec = parse_tag("5 1 FV")
    assert spec.pool == 5 and spec.willpower and spec.modifier == 0
    assert parse_tag("Destreza+Atletismo 1 FV").willpower
    assert parse_tag("Destreza+Atletismo 1 FV").trait_ratings == ()


def test_dice_notation_target_number_is_the_difficulty() -> None:
    """vampiro-reglas.txt «Dificultades»: "Cada vez que logres ese número con uno de tus dados se
    considerará que has logrado un éxito": `>7` (7 or more) is difficulty 7."""
    spec = parse_tag("5d10>7")
    assert spec.pool == 5 and spec.difficulty == 7
    assert parse_tag("5d10 >= 8").difficulty == 8
    assert parse_tag("5d10≥6").difficulty == 6


def test_dice_notation_in_exaltado_is_its_fixed_target() -> None:
    """exaltado-reglas.txt: "Cada dado en el que salga 7, 8, 9 o 0 (10) será considerado un éxito"."""
    spec = parse_tag("5d10>7", ruleset_id="exaltado")
    assert spec.pool == 5 and spec.difficulty is None and spec.successes_required is None
    err = refused("5d10>8", ruleset_id="exaltado")
    assert err.code == "exalted_target_seven"
    assert error_message(err).endswith("¿Quisiste decir `[tirada]5d10[/tirada]`?")


@pytest.mark.parametrize("body", ["5 necesita 3 éxitos", "5 éxitos 3", "5 necesita éxitos 3", "5 3 exitos",
                                  "5 needs 3 successes"])
def test_successes_needed_before_or_after_the_number(body: str) -> None:
    """vampiro-reglas.txt «Acciones Extendidas»: "a veces necesitarás más de un éxito"."""
    spec = parse_tag(body)
    assert spec.pool == 5 and spec.successes_required == 3


def test_multiple_actions_with_the_number_first() -> None:
    """exaltado-reglas.txt «Acciones múltiples»: "El número total de acciones que realiza el
    personaje determina el número de dados que son sustraídos de la primera tarea"."""
    spec = parse_tag("Destreza+Atletismo 3 acciones dif 7")
    assert spec.actions == 3 and spec.difficulty == 7 and spec.traits == ("Destreza", "Atletismo")
    assert spec.trait_ratings == ()  # the 3 is the actions, not Atletismo's rating
    assert parse_tag("8 3 acciones") == parse_tag("8 acciones 3")
    assert parse_tag("8 acciones 3").pool == 8


def test_difficulty_first_with_a_colon() -> None:
    spec = parse_tag("Dificultad 7: Destreza+Atletismo")
    assert spec.difficulty == 7 and spec.traits == ("Destreza", "Atletismo") and spec.comment == ""
    assert parse_tag("dif 7: Destreza+Atletismo fv").willpower
    assert parse_tag("5 dif 7: esquivo").comment == "esquivo"  # after a pool it stays a comment


def test_a_number_in_words() -> None:
    assert parse_tag("cinco dados").pool == 5
    assert parse_tag("cinco dados dif 7").difficulty == 7


# ---- refused, with the corrected tag ----------------------------------------------------------


def test_a_number_after_the_last_trait_only_is_refused_as_ambiguous() -> None:
    err = refused("Destreza+Atletismo 2")
    assert err.code == "ambiguous_rating" and err.found == "Atletismo 2"
    assert error_message(err) == (
        "«Atletismo 2»: ¿es la puntuación de Atletismo o 2 dados más? Escribe la puntuación de cada Rasgo "
        "(Destreza 3+Atletismo 2) o el signo de los dados. ¿Quisiste decir `[tirada]Destreza+Atletismo +2[/tirada]`?")
    assert parse_tag("Destreza+Atletismo +2").modifier == 2  # and the suggestion reads


def test_more_than_one_willpower_point_is_refused_with_the_tag_that_spends_one() -> None:
    """vampiro-reglas.txt «Éxitos Automáticos»: "Esto solo puede hacerse una vez por turno"."""
    err = refused("5 2 FV")
    assert err.code == "willpower_one_point" and err.found == "2 FV" and err.position == 2
    assert "¿Quisiste decir `[tirada]5 FV[/tirada]`?" in error_message(err)
    assert "Did you mean `[roll]5 FV[/roll]`?" in error_message(err, "en")
    assert parse_tag("5 FV").willpower


def test_an_unquoted_ext_name_joined_to_a_trait_is_refused_with_the_pool_first() -> None:
    err = refused("ext 10 Destreza+Atletismo dif 7 # muro")
    assert err.code == "ambiguous_ext_name" and err.found == "Destreza"
    assert error_message(err).endswith("¿Quisiste decir `[tirada]Destreza+Atletismo dif 7 ext 10 # muro[/tirada]`?")
    assert parse_tag("Destreza+Atletismo dif 7 ext 10 # muro").extended == ExtendedSpec(10, "")


def test_a_number_in_words_where_a_digit_goes_shows_the_digit_and_counts_from_one() -> None:
    err = refused("Destreza+Atletismo dif siete")
    assert err.position == 23  # 0-based offset in TagError
    assert error_message(err) == ("no entiendo «siete» (carácter 24); se esperaba un número. "
                                  "¿Quisiste decir `[tirada]Destreza+Atletismo dif 7[/tirada]`?")


def test_abbreviated_traits_with_a_sheet_are_refused_with_the_full_tag() -> None:
    """Not rolled silently: a player who meant another trait would lose the roll."""
    spec = parse_tag("Des+Atl dif 7")
    assert spec.traits == ("Des", "Atl")
    with pytest.raises(StateError) as info:
        resolve_pool(sheet(**KOI), spec)
    err = info.value
    assert err.code == "abbreviated_trait" and err.params["full"] == "Destreza"
    fixed = corrected_tag("[tirada]Des+Atl dif 7[/tirada]", err.params["replacements"])
    assert fixed == "[tirada]Destreza+Atletismo dif 7[/tirada]"
    assert with_suggestion(state_message(err), fixed) == (
        "«Des» es una abreviatura de Destreza (Koi): no se tira con abreviaturas, escribe el nombre entero. "
        "¿Quisiste decir `[tirada]Destreza+Atletismo dif 7[/tirada]`?")


def test_an_abbreviation_of_two_sheet_traits_is_an_unknown_trait() -> None:
    koi = sheet(attributes={"Destreza": 3}, abilities={"Pelea": 2, "Pelea con Armas": 1, "Supervivencia": 1})
    with pytest.raises(StateError) as info:  # "Pel" starts Pelea and Pelea con Armas
        resolve_pool(koi, parse_tag("Destreza+Pel"))
    assert info.value.code == "unknown_trait" and info.value.params["trait"] == "Pel"
    with pytest.raises(StateError) as info:  # "S" is one letter: never an abbreviation
        resolve_pool(koi, parse_tag("Destreza+S"))
    assert info.value.code == "unknown_trait"
    with pytest.raises(StateError) as info:  # "Su" starts Supervivencia only
        resolve_pool(koi, parse_tag("Destreza+Su"))
    assert info.value.code == "abbreviated_trait" and info.value.params["full"] == "Supervivencia"


def test_abbreviated_traits_without_a_sheet_are_refused_clearly() -> None:
    with pytest.raises(StateError) as info:
        resolve_pool(None, parse_tag("Des+Atl dif 7"))
    assert info.value.code == "abbreviated_trait_no_sheet"
    assert state_message(info.value) == (
        "no tienes hoja de personaje en esta partida, y «Des» parece una abreviatura (Destreza, Atletismo): "
        "escribe un número de dados, o cada Rasgo entero con su puntuación (Destreza 3+Atletismo 2)")


def test_an_unknown_trait_suggests_the_closest_on_the_sheet() -> None:
    with pytest.raises(StateError) as info:
        resolve_pool(sheet(**KOI), parse_tag("Destresa+Atletismo dif 7"))
    err = info.value
    assert err.code == "unknown_trait" and err.params["closest"] == "Destreza"
    fixed = corrected_tag("[roll]Destresa + Atletismo dif 7[/roll]", err.params["replacements"])
    assert fixed == "[roll]Destreza + Atletismo dif 7[/roll]"
    assert with_suggestion(state_message(err, "en"), fixed, "en").endswith(
        "Did you mean `[roll]Destreza + Atletismo dif 7[/roll]`?")


def test_corrected_tag_replaces_whole_words_only() -> None:
    assert corrected_tag("[tirada]Atl+Atlas[/tirada]", [("Atl", "Atletismo")]) == "[tirada]Atletismo+Atlas[/tirada]"
    assert corrected_tag("[tirada]5[/tirada]", [("Atl", "Atletismo")]) == "[tirada]5[/tirada]"


# --- tag spellings -------------------------------------------------------------------------------


@pytest.mark.parametrize(("body", "difficulty", "willpower", "comment"), [
    ("Destreza+Atletismo: dif 7", 7, False, ""),
    ("Percepción+Alerta: dificultad 8, fv", 8, True, ""),
    ("5: dif 7 fv", 7, True, ""),
    ("5 dif 6: FV", 6, True, ""),
    ("5 dif 7: esquivo el golpe", 7, False, "esquivo el golpe"),
    ("5 dif 7: ataque y fv", 7, False, "ataque y fv"),
])
def test_a_colon_before_an_option_is_punctuation_not_a_comment(body, difficulty, willpower, comment):
    """docs/tags.md: ``:`` starts a comment; players also write it after the dice
    ("Destreza+Atletismo: dif 7"), and the difficulty and Willpower were read as a comment --
    silently rolled at 6 without the point.  A ``:`` followed by a difficulty, successes or
    Willpower is punctuation; any other text after it is still the comment."""
    spec = parse_tag(body)
    assert (spec.difficulty, spec.willpower, spec.comment) == (difficulty, willpower, comment)


@pytest.mark.parametrize(("body", "fields"), [
    ("5 dif 7 y fv", {"pool": 5, "difficulty": 7, "willpower": True}),
    ("Carisma y Expresión dif 7 y fv", {"traits": ("Carisma", "Expresión"), "difficulty": 7, "willpower": True}),
    ("Destreza e Informática y esp", {"traits": ("Destreza", "Informática"), "specialty": True}),
    ("5 dif (7)", {"pool": 5, "difficulty": 7}),
    ("Destreza(3)+Atletismo(2) dif(7)", {"trait_ratings": (3, 2), "difficulty": 7}),
    ("8 acción 2 de 3", {"pool": 8, "action": 2, "actions": 3}),
    ("8 action 2 of 3", {"pool": 8, "action": 2, "actions": 3}),
    ("5 FdV", {"pool": 5, "willpower": True}),
    ("5 F.d.V.", {"pool": 5, "willpower": True}),
    ("5 dif 6 fv ¡por mi clan!", {"pool": 5, "willpower": True, "comment": "por mi clan!"}),
])
def test_spellings_players_write_read_as_they_mean(body, fields):
    """Issue 16, «Tag language» ("accept what is unambiguous"): a "y" before an option is "and"
    (it was read as a trait: "dif 7 y fv" was refused as mixing a number and a trait "fv"),
    "dif (7)" is "dif 7", "acción 2 de 3" names the action and the count, "FdV" is the usual
    Spanish abbreviation of Fuerza de Voluntad, and "¡" opens a comment as "!" does."""
    spec = parse_tag(body)
    for name, value in fields.items():
        assert getattr(spec, name) == value, name


def test_a_y_between_two_traits_still_joins_them():
    """docs/tags.md: "y" between two traits joins them like "+" (vampiro-reglas.txt
    «Puntuaciones»: Atributo + Habilidad); three are still refused."""
    assert parse_tag("Destreza y Atletismo dif 7").traits == ("Destreza", "Atletismo")
    with pytest.raises(Exception) as err:
        parse_tag("Destreza y Atletismo y Pelea")
    assert getattr(err.value, "code", "") == "too_many_traits"


def test_the_cheat_sheet_shows_the_spellings_the_review_added():
    """Issue 16 «Done when»: the cheat sheet (``[tirada]ayuda[/tirada]``) shows the spellings."""
    from core.tags.messages import cheat_sheet

    es, en = cheat_sheet("es"), cheat_sheet("en")
    assert "FdV" in es and "acción 2 de 3" in es and "dif (7)" in es and "¡" in es
    assert "action 2 of 3" in en and "diff (7)" in en


def test_narrador_tags_says_one_success_in_the_singular():
    """``narrador tags`` on an exaltado tag (exaltado-reglas.txt «Dificultad»: one success by
    default) says "1 éxito necesario" / "1 success needed", not "1 éxitos"."""
    from core.tags.messages import describe_spec

    spec = parse_tag("8 fv", ruleset_id="exaltado")
    assert "1 éxito necesario" in describe_spec(spec, "es", "exaltado")
    assert "1 success needed" in describe_spec(spec, "en", "exaltado")
