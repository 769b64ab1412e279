"""Trait names: the standard Vampiro (V:tM) and Exaltado attributes, abilities and virtues,
with their Spanish and English names, so ``Destreza`` and ``Dexterity`` are one trait.

Names are compared by :func:`core.tags.normalize_trait` (accents, case, ``_`` and spacing
ignored).  A name not in the table is a custom trait (Disciplines, Backgrounds, Charms...)
keyed by its normalised name.  Pure data and functions.

Sources: vampiro-reglas.txt «Puntuaciones» (Atributo + Habilidad; Humanidad and Fuerza de
Voluntad rated up to 10); exaltado-reglas.txt «Índices de Rasgo» and its examples (Destreza +
Atletismo, Percepción + Consciencia, Inteligencia + Lingüística, Resistencia + Vigor);
gehena-reglas.txt «Puntuaciones».
"""

from __future__ import annotations

from dataclasses import dataclass

from core.tags import normalize_trait

__all__ = ["TRAITS", "TraitInfo", "closest_trait", "lookup", "trait_key", "trait_name"]


@dataclass(frozen=True)
class TraitInfo:
    """A standard trait: canonical ``key`` (English, lowercase), ``category``
    (``attribute``, ``ability``, ``virtue``, ``humanity``, ``willpower``), ``max_rating``
    (5, or 10 for Humanity and Willpower), Spanish display name ``es`` and the accepted
    ``names``."""

    key: str
    category: str
    max_rating: int
    es: str
    names: tuple[str, ...]

    @property
    def en(self) -> str:
        """The English display name: the key in title case (``Dexterity``, ``Animal Ken``,
        ``Self-Control``)."""
        return self.key.title()


def _t(key: str, category: str, es: str, *names: str, max_rating: int = 5) -> TraitInfo:
    return TraitInfo(key, category, max_rating, es, (key, es) + names)


TRAITS: tuple[TraitInfo, ...] = (
    # attributes (V:tM and Exaltado share the nine)
    _t("strength", "attribute", "Fuerza"),
    _t("dexterity", "attribute", "Destreza"),
    _t("stamina", "attribute", "Resistencia"),
    _t("charisma", "attribute", "Carisma"),
    _t("manipulation", "attribute", "Manipulación"),
    _t("appearance", "attribute", "Apariencia"),
    _t("perception", "attribute", "Percepción"),
    _t("intelligence", "attribute", "Inteligencia"),
    _t("wits", "attribute", "Astucia"),
    # V:tM talents, skills, knowledges
    _t("alertness", "ability", "Alerta"),
    _t("athletics", "ability", "Atletismo"),
    _t("awareness", "ability", "Consciencia"),
    _t("brawl", "ability", "Pelea"),
    _t("dodge", "ability", "Esquivar"),
    _t("empathy", "ability", "Empatía"),
    _t("expression", "ability", "Expresión"),
    _t("intimidation", "ability", "Intimidación"),
    _t("leadership", "ability", "Liderazgo"),
    _t("streetwise", "ability", "Callejeo"),
    _t("subterfuge", "ability", "Subterfugio"),
    _t("animal ken", "ability", "Trato con Animales"),
    _t("crafts", "ability", "Artesanía", "craft", "oficios", "pericias"),
    _t("drive", "ability", "Conducir"),
    _t("etiquette", "ability", "Etiqueta"),
    _t("firearms", "ability", "Armas de Fuego"),
    _t("larceny", "ability", "Latrocinio"),
    _t("melee", "ability", "Pelea con Armas", "armas cuerpo a cuerpo", "combate cuerpo a cuerpo"),
    _t("performance", "ability", "Interpretación"),
    _t("security", "ability", "Seguridad"),
    _t("stealth", "ability", "Sigilo"),
    _t("survival", "ability", "Supervivencia"),
    _t("academics", "ability", "Académicos", "erudicion", "academicismo"),
    _t("computer", "ability", "Informática", "computers"),
    _t("finance", "ability", "Finanzas"),
    _t("investigation", "ability", "Investigación"),
    _t("law", "ability", "Leyes", "derecho"),
    _t("linguistics", "ability", "Lingüística"),
    _t("medicine", "ability", "Medicina"),
    _t("occult", "ability", "Ocultismo"),
    _t("politics", "ability", "Política"),
    _t("science", "ability", "Ciencias", "ciencia"),
    _t("technology", "ability", "Tecnología"),
    # Exaltado abilities not already above
    _t("archery", "ability", "Arquería", "tiro con arco"),
    _t("martial arts", "ability", "Artes Marciales"),
    _t("thrown", "ability", "Arrojadizas", "armas arrojadizas"),
    _t("endurance", "ability", "Aguante"),
    _t("presence", "ability", "Presencia"),
    _t("resistance", "ability", "Vigor"),
    _t("lore", "ability", "Saber"),
    _t("bureaucracy", "ability", "Burocracia"),
    _t("ride", "ability", "Montar"),
    _t("sail", "ability", "Navegar", "navegacion"),
    _t("socialize", "ability", "Socializar", "sociabilidad"),
    # virtues: V:tM, then Exaltado
    _t("conscience", "virtue", "Conciencia"),
    _t("self-control", "virtue", "Autocontrol", "self control", "autodominio"),
    _t("courage", "virtue", "Coraje"),
    _t("conviction", "virtue", "Convicción"),
    _t("instinct", "virtue", "Instinto"),
    _t("compassion", "virtue", "Compasión"),
    _t("temperance", "virtue", "Templanza"),
    _t("valor", "virtue", "Valor", "valour"),
    # 10-point traits
    _t("humanity", "humanity", "Humanidad", max_rating=10),
    # every spelling of the tag language's Willpower word (grammar.lark WP_KW), as a trait
    # joined to another one is read (issue 26: "Destreza y FV" is the two traits)
    _t("willpower", "willpower", "Fuerza de Voluntad", "voluntad", "fv", "wp", "fdv", "f.v", "f.v.", "f. v",
       "f. v.", "f.d.v", "f.d.v.", "f. d. v", "f. d. v.", max_rating=10),
)

_BY_NAME: dict[str, TraitInfo] = {}
for _info in TRAITS:
    for _name in _info.names:
        _BY_NAME.setdefault(normalize_trait(_name), _info)


def lookup(name: str) -> TraitInfo | None:
    """The standard trait called ``name`` in Spanish or English (accents/case ignored), or
    ``None`` for a custom trait.  Never raises."""
    return _BY_NAME.get(normalize_trait(name))


def trait_key(name: str) -> str:
    """The key a sheet stores ``name`` under: the canonical English key of a standard trait,
    else the normalised name (``"Potencia"`` -> ``"potencia"``)."""
    info = lookup(name)
    return info.key if info else normalize_trait(name)



def trait_name(name: str, lang: str) -> str:
    """``name`` as a reply in ``lang`` names it: a standard trait by its Spanish name (``es``)
    or its English one (``en``), in whichever language it was written (a sheet stores the
    Spanish name: an English game's refusal said "'Dex' abbreviates Destreza", issue 26's
    review of every reply kind); a custom trait (a Discipline, a Background) as written.
    Never raises."""
    info = lookup(name)
    if info is None:
        return name
    return info.en if lang == "en" else info.es


def closest_trait(name: str, category: str) -> str | None:
    """The standard ``category`` trait (``attribute``, ``ability``, ``virtue``) whose name
    (Spanish or English, as the table writes it) is closest to ``name``, for a "did you
    mean"; ``None`` when nothing is close (difflib ratio below 0.6 on normalised names)."""
    import difflib

    candidates: dict[str, str] = {}
    for info in TRAITS:
        if info.category == category:
            for written in (info.es, info.en, *info.names[2:]):
                candidates.setdefault(normalize_trait(written), written)
    close = difflib.get_close_matches(normalize_trait(name), list(candidates), n=1, cutoff=0.6)
    return candidates[close[0]] if close else None
