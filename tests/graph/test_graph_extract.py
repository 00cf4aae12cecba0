"""Entities and relations by rules, in English, Russian, French and Spanish
(graph/extract.py and the rule files language/rules/graph/*.toml).

Named test_graph_extract.py, not test_extract.py: test folders are not packages here, so
basenames must differ from tests/capture/test_extract.py."""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType

import pytest

from memoracle.graph.extract import (
    EntityMention,
    GraphRuleError,
    RelationMention,
    canonical_key,
    default_graph_rules,
    extract,
    load_graph_rules,
)
from memoracle.graph.ontology import Ontology, default_ontology, load_ontology

U = "user"
Entities = set[tuple[str, str]]
Relations = set[tuple[str, str, str]]


def found(text: str, lang: str | None = None, **kwargs: str) -> tuple[Entities, Relations]:
    result = extract(text, lang=lang, ontology=default_ontology(), **kwargs)
    return (
        {(e.key, e.type) for e in result.entities},
        {(r.source, r.relation, r.target) for r in result.relations},
    )


# (language, sentence, entities (key, type), relations (source, relation, target)),
# exactly: nothing more may be found.
CASES: list[tuple[str, str, Entities, Relations]] = [
    # --- people and roles ------------------------------------------------------------
    (
        "en",
        "My wife Anna works at Acme.",
        {(U, "Person"), ("anna", "Person"), ("acme", "Organization")},
        {("anna", "family_of", U), ("anna", "works_at", "acme")},
    ),
    ("en", "Marc is my manager.", {(U, "Person"), ("marc", "Person")}, {("marc", "manages", U)}),
    (
        "en",
        "My manager is Priya and she's great.",
        {(U, "Person"), ("priya", "Person")},
        {("priya", "manages", U)},
    ),
    (
        "en",
        "Anna's husband Marc is a doctor.",
        {("anna", "Person"), ("marc", "Person")},
        {("marc", "family_of", "anna")},
    ),
    (
        "en",
        "My best friend Tom lives in Paris.",
        {(U, "Person"), ("tom", "Person"), ("paris", "Location")},
        {("tom", "knows", U), ("tom", "lives_in", "paris")},
    ),
    ("en", "Yesterday I met Anna and Marc.", {("anna", "Person"), ("marc", "Person")}, set()),
    (
        "ru",
        "Моя жена Анна работает в Яндексе.",
        {(U, "Person"), ("анн", "Person"), ("яндекс", "Organization")},
        {("анн", "family_of", U), ("анн", "works_at", "яндекс")},
    ),
    ("ru", "Марк — мой начальник.", {(U, "Person"), ("марк", "Person")}, {("марк", "manages", U)}),
    ("ru", "Вчера я встретил Анну.", {("анн", "Person")}, set()),
    (
        "fr",
        "Ma femme Anna travaille chez Acme.",
        {(U, "Person"), ("anna", "Person"), ("acme", "Organization")},
        {("anna", "family_of", U), ("anna", "works_at", "acme")},
    ),
    (
        "fr",
        "La femme de Marc, Julie, est médecin.",
        {("marc", "Person"), ("julie", "Person")},
        {("julie", "family_of", "marc")},
    ),
    ("fr", "Marc est mon manager.", {(U, "Person"), ("marc", "Person")}, {("marc", "manages", U)}),
    (
        "es",
        "Mi esposa Ana trabaja en Telefónica.",
        {(U, "Person"), ("ana", "Person"), ("telefonica", "Organization")},
        {("ana", "family_of", U), ("ana", "works_at", "telefonica")},
    ),
    ("es", "Marc es mi jefe.", {(U, "Person"), ("marc", "Person")}, {("marc", "manages", U)}),
    ("es", "Conocí a Lucía y a Pedro.", {("lucia", "Person"), ("pedro", "Person")}, set()),
    # --- organisations -----------------------------------------------------------------
    (
        "en",
        "I'm working at Acme Corp as a designer.",
        {(U, "Person"), ("acme corp", "Organization")},
        {(U, "works_at", "acme corp")},
    ),
    (
        "en",
        "I work at Acme and Anna works at Globex.",
        {(U, "Person"), ("acme", "Organization"), ("anna", "Person"), ("globex", "Organization")},
        {(U, "works_at", "acme"), ("anna", "works_at", "globex")},
    ),
    (
        "ru",
        "Я работаю в Яндексе уже три года.",
        {(U, "Person"), ("яндекс", "Organization")},
        {(U, "works_at", "яндекс")},
    ),
    (
        "fr",
        "Je travaille pour la Société Générale.",
        {(U, "Person"), ("societe generale", "Organization")},
        {(U, "works_at", "societe generale")},
    ),
    (
        "es",
        "Trabajo en Google desde 2020.",
        {(U, "Person"), ("google", "Organization")},
        {(U, "works_at", "google")},
    ),
    # --- locations ---------------------------------------------------------------------
    (
        "en",
        "Anna lives in Lyon.",
        {("anna", "Person"), ("lyon", "Location")},
        {("anna", "lives_in", "lyon")},
    ),
    (
        "en",
        "I moved to Amsterdam two years ago.",
        {(U, "Person"), ("amsterdam", "Location")},
        {(U, "lives_in", "amsterdam")},
    ),
    (
        "en",
        "Acme is headquartered in Berlin.",
        {("acme", "Organization"), ("berlin", "Location")},
        {("acme", "located_at", "berlin")},
    ),
    (
        "ru",
        "Анна живёт в Лионе.",
        {("анн", "Person"), ("лион", "Location")},
        {("анн", "lives_in", "лион")},
    ),
    ("ru", "Живу в Москве.", {(U, "Person"), ("москв", "Location")}, {(U, "lives_in", "москв")}),
    (
        "fr",
        "J'habite à Lyon avec ma femme.",
        {(U, "Person"), ("lyon", "Location")},
        {(U, "lives_in", "lyon")},
    ),
    (
        "fr",
        "Acme a son siège à Paris.",
        {("acme", "Organization"), ("paris", "Location")},
        {("acme", "located_at", "paris")},
    ),
    (
        "es",
        "Carlos vive en Sevilla.",
        {("carlos", "Person"), ("sevilla", "Location")},
        {("carlos", "lives_in", "sevilla")},
    ),
    (
        "es",
        "Me mudé a Valencia.",
        {(U, "Person"), ("valencia", "Location")},
        {(U, "lives_in", "valencia")},
    ),
    # --- tools and services ----------------------------------------------------------
    (
        "en",
        "We use Postgres, Redis and Kafka for caching.",
        {(U, "Person"), ("postgresql", "Infrastructure"), ("redis", "Infrastructure")}
        | {("kafka", "Tool")},
        {(U, "uses", "postgresql"), (U, "uses", "redis"), (U, "uses", "kafka")},
    ),
    (
        "en",
        "We use docker and AWS.",
        {(U, "Person"), ("docker", "Infrastructure"), ("aws", "Service")},
        {(U, "uses", "docker"), (U, "uses", "aws")},
    ),
    (
        "en",
        "The Apollo project uses Postgres.",
        {("apollo", "Project"), ("postgresql", "Infrastructure")},
        {("apollo", "uses", "postgresql")},
    ),
    (
        "ru",
        "Мы используем постгрес и Redis.",
        {(U, "Person"), ("postgresql", "Infrastructure"), ("redis", "Infrastructure")},
        {(U, "uses", "postgresql"), (U, "uses", "redis")},
    ),
    (
        "fr",
        "Nous utilisons Postgres et Slack.",
        {(U, "Person"), ("postgresql", "Infrastructure"), ("slack", "Tool")},
        {(U, "uses", "postgresql"), (U, "uses", "slack")},
    ),
    (
        "es",
        "Usamos Vim y Redis.",
        {(U, "Person"), ("vim", "Tool"), ("redis", "Infrastructure")},
        {(U, "uses", "vim"), (U, "uses", "redis")},
    ),
    # --- projects ----------------------------------------------------------------------
    (
        "en",
        "I'm working on the Apollo project.",
        {(U, "Person"), ("apollo", "Project")},
        {(U, "works_on", "apollo")},
    ),
    (
        "ru",
        "Я работаю над проектом Аполлон.",
        {(U, "Person"), ("аполлон", "Project")},
        {(U, "works_on", "аполлон")},
    ),
    (
        "fr",
        "Je travaille sur le projet Apollo.",
        {(U, "Person"), ("apollo", "Project")},
        {(U, "works_on", "apollo")},
    ),
    (
        "es",
        "Trabajo en el proyecto Apolo.",
        {(U, "Person"), ("apolo", "Project")},
        {(U, "works_on", "apolo")},
    ),
    # --- pets --------------------------------------------------------------------------
    ("en", "My dog Rex loves walks.", {(U, "Person"), ("rex", "Pet")}, {("rex", "has_owner", U)}),
    (
        "en",
        "I have a golden retriever named Max.",
        {(U, "Person"), ("max", "Pet")},
        {("max", "has_owner", U)},
    ),
    (
        "ru",
        "Мой пёс Рекс любит гулять.",
        {(U, "Person"), ("рекс", "Pet")},
        {("рекс", "has_owner", U)},
    ),
    (
        "ru",
        "У меня есть кот Барсик.",
        {(U, "Person"), ("барсик", "Pet")},
        {("барсик", "has_owner", U)},
    ),
    (
        "fr",
        "J'ai un chat qui s'appelle Félix.",
        {(U, "Person"), ("felix", "Pet")},
        {("felix", "has_owner", U)},
    ),
    (
        "es",
        "Mi perro Rex es muy bueno.",
        {(U, "Person"), ("rex", "Pet")},
        {("rex", "has_owner", U)},
    ),
    # --- reports_to / manages --------------------------------------------------------
    ("en", "I report to Marc.", {(U, "Person"), ("marc", "Person")}, {(U, "reports_to", "marc")}),
    ("en", "Marc reports to me.", {(U, "Person"), ("marc", "Person")}, {("marc", "reports_to", U)}),
    (
        "en",
        "I manage Marc and Julie.",
        {(U, "Person"), ("marc", "Person"), ("julie", "Person")},
        {(U, "manages", "marc"), (U, "manages", "julie")},
    ),
    ("ru", "Я подчиняюсь Марку.", {(U, "Person"), ("марк", "Person")}, {(U, "reports_to", "марк")}),
    ("ru", "Марк руководит мной.", {(U, "Person"), ("марк", "Person")}, {("марк", "manages", U)}),
    (
        "fr",
        "Je rends compte à Marc.",
        {(U, "Person"), ("marc", "Person")},
        {(U, "reports_to", "marc")},
    ),
    (
        "fr",
        "Je gère le projet Apollo.",
        {(U, "Person"), ("apollo", "Project")},
        {(U, "manages", "apollo")},
    ),
    ("es", "Le reporto a Marc.", {(U, "Person"), ("marc", "Person")}, {(U, "reports_to", "marc")}),
    (
        "es",
        "Dirijo a Marc y a Pedro.",
        {(U, "Person"), ("marc", "Person"), ("pedro", "Person")},
        {(U, "manages", "marc"), (U, "manages", "pedro")},
    ),
    # --- depends_on --------------------------------------------------------------------
    (
        "en",
        "Apollo depends on Redis and Stripe.",
        {("apollo", "Project"), ("redis", "Infrastructure"), ("stripe", "Service")},
        {("apollo", "depends_on", "redis"), ("apollo", "depends_on", "stripe")},
    ),
    (
        "ru",
        "Аполлон зависит от Redis.",
        {("аполлон", "Project"), ("redis", "Infrastructure")},
        {("аполлон", "depends_on", "redis")},
    ),
    (
        "fr",
        "Apollo dépend de Redis.",
        {("apollo", "Project"), ("redis", "Infrastructure")},
        {("apollo", "depends_on", "redis")},
    ),
    (
        "es",
        "Apolo depende de Redis.",
        {("apolo", "Project"), ("redis", "Infrastructure")},
        {("apolo", "depends_on", "redis")},
    ),
]


@pytest.mark.parametrize(("lang", "text", "entities", "relations"), CASES)
def test_extracts(lang: str, text: str, entities: Entities, relations: Relations) -> None:
    assert found(text, lang) == (entities, relations)


@pytest.mark.parametrize(("lang", "text", "entities", "relations"), CASES)
def test_extracts_with_the_language_detected(
    lang: str, text: str, entities: Entities, relations: Relations
) -> None:
    assert found(text) == (entities, relations)


# Sentences that must yield no relation, and at most these entities.
NOTHING: list[tuple[str, str, Entities]] = [
    # a capitalised word opening a sentence is no name; nor are "I", days and months
    ("en", "Side project is going well.", set()),
    ("en", "Yesterday was great.", set()),
    ("en", "I met Monday with the team.", set()),
    ("en", "I moved to May.", set()),
    ("en", "I live in April.", set()),
    ("ru", "Сегодня был трудный день.", set()),
    ("fr", "Lundi j'ai rencontré Mardi.", set()),
    ("es", "Conocí a Martes.", set()),
    # unnamed, or nobody we can pin down
    ("en", "My brother works at a startup.", set()),
    ("en", "She works at Acme.", {("acme", "Organization")}),
    ("en", "You mentioned you live in Berlin.", set()),
    # not a claim: a question, a hypothetical, a hedge, a negation
    ("en", "Do you work at Google?", set()),
    ("en", "If I worked at Google I'd be rich.", set()),
    ("en", "I think Anna works at Acme.", {("anna", "Person"), ("acme", "Organization")}),
    ("en", "I don't work at Acme anymore.", set()),
    ("ru", "Я больше не работаю в Яндексе.", {("яндекс", "Organization")}),
    ("fr", "Je ne travaille plus chez Acme.", set()),
    ("es", "Ya no trabajo en Google.", {("google", "Organization")}),
    ("es", "¿Trabajas en Google?", set()),
    # the name does not end its clause, or is someone's, or is no such thing
    ("en", "I work at Acme headquarters.", set()),
    ("en", "I emailed Acme support.", set()),
    ("en", "I work at Anna's bakery.", set()),
    ("en", "We moved to Postgres.", set()),
    ("en", "I'm working on Windows.", set()),
    ("en", "We use tabs.", set()),
    ("es", "Creo que nos quedamos con SQLite para el prototipo.", set()),
]


@pytest.mark.parametrize(("lang", "text", "entities"), NOTHING)
def test_does_not_extract(lang: str, text: str, entities: Entities) -> None:
    assert found(text, lang) == (entities, set())


def test_the_speaker_is_never_an_entity_of_its_own_words() -> None:
    result = extract("I met Anna.", ontology=default_ontology())
    assert [e.name for e in result.entities] == ["Anna"]


@pytest.mark.parametrize(
    "spellings",
    [
        ["Anna", "my wife Anna", "Anna's", "ANNA", "My wife Anna"],
        ["Анна", "Анны", "Анной", "моя жена Анна"],
        ["Léa", "Lea", "léa's"],
        ["Postgres", "PostgreSQL", "postgres"],
        ["the Louvre", "Louvre"],
    ],
)
def test_every_spelling_of_a_name_has_one_key(spellings: list[str]) -> None:
    assert len({canonical_key(spelling) for spelling in spellings}) == 1


def test_canonical_keys() -> None:
    assert canonical_key("my wife Anna") == "anna"
    assert canonical_key("Bank of America") == "bank america"
    assert canonical_key("Анной") == "анн"


def test_one_entity_for_every_mention_of_a_name() -> None:
    text = (
        "My wife Anna works at Acme. Anna's car is red. I met Anna. We use Postgres and PostgreSQL."
    )
    result = extract(text, ontology=default_ontology())
    annas = [e for e in result.entities if e.key == "anna"]
    assert annas == [EntityMention("Anna", "anna", "Person")]
    assert EntityMention("Postgres", "postgresql", "Infrastructure", ("PostgreSQL",)) in (
        result.entities
    )


def test_a_declined_russian_name_is_one_entity_with_its_spellings() -> None:
    result = extract(
        "Моя жена Анна живёт в Лионе. Вчера я встретил Анну.", ontology=default_ontology()
    )
    anna = next(e for e in result.entities if e.key == "анн")
    assert (anna.name, anna.aliases) == ("Анна", ("Анну",))


def test_relations_carry_their_role_and_rule() -> None:
    result = extract("My dog Rex is asleep. I work at Acme.", ontology=default_ontology())
    assert result.relations == (
        RelationMention("rex", "has_owner", U, "dog"),
        RelationMention(U, "works_at", "acme"),
    )
    assert [r.rule for r in result.relations] == ["en.role", "en.works_at"]


def test_the_speaker_is_named_when_given() -> None:
    result = extract("I live in Lyon.", speaker="Caroline", ontology=default_ontology())
    assert result.entities[0] == EntityMention("Caroline", "caroline", "Person")
    assert result.relations == (RelationMention("caroline", "lives_in", "lyon"),)


def test_the_ontology_decides_what_is_kept() -> None:
    default = default_ontology()
    without = Ontology(
        default.entity_types,
        MappingProxyType({k: v for k, v in default.relation_types.items() if k != "works_at"}),
    )
    result = extract("I work at Acme and we use Vim.", ontology=without)
    assert {(r.relation, r.target) for r in result.relations} == {("uses", "vim")}
    assert {e.key for e in result.entities} == {U, "acme", "vim"}


def test_extraction_works_with_a_user_ontology(tmp_path: Path) -> None:
    path = tmp_path / "ontology.yaml"
    path.write_text("entity_types:\n  Recipe:\n    description: A dish.\n", encoding="utf-8")
    assert found("I work at Acme.", "en") == (
        {(U, "Person"), ("acme", "Organization")},
        {(U, "works_at", "acme")},
    )
    assert extract("I work at Acme.", ontology=load_ontology(path)).relations


def test_a_language_without_rules_yields_nothing() -> None:
    assert (
        extract("Ich arbeite bei Siemens.", lang="de", ontology=default_ontology()).entities == ()
    )


def test_the_packaged_rule_files_fit_the_default_ontology() -> None:
    rules = load_graph_rules()  # eager: every file compiled and checked
    assert rules.codes == ("en", "es", "fr", "ru")
    ontology = default_ontology()
    for code in rules.codes:
        language = rules.language(code)
        assert language is not None
        for role in language.roles.values():
            assert ontology.allows(role.relation, role.type, "Person")
        for rule in language.rules:
            assert rule.target is None or rule.target in ontology.entity_types
            assert rule.relation is None or rule.relation in ontology.relation_types
    assert default_graph_rules().known.types["postgresql"] == "Infrastructure"


def _rules_folder(tmp_path: Path, en: str) -> Path:
    folder = tmp_path / "rules"
    folder.mkdir()
    (folder / "en.toml").write_text(en, encoding="utf-8")
    return folder


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[language]\ncode = "en"\n[words]\n[colour]\n', "unknown key(s) colour"),
        ('[language]\ncode = "fr"\n[words]\n', "the file is named 'en.toml'"),
        (
            '[language]\ncode = "en"\n[words]\n[[rule]]\nid = "x"\nrelation = "eats"\n'
            "target = \"Pet\"\npattern = '''eats (?P<target>.+)'''\n",
            "rule 'x': unknown relation 'eats'",
        ),
        (
            '[language]\ncode = "en"\n[words]\n[[rule]]\nid = "x"\nrelation = "works_at"\n'
            "target = \"Location\"\npattern = '''at (?P<target>.+)'''\n",
            "rule 'x': the ontology has no 'works_at' from a Person to a Location",
        ),
        (
            '[language]\ncode = "en"\n[words]\n[[rule]]\nid = "x"\ntarget = "Person"\n'
            "pattern = '''met (?P<who>.+)'''\n",
            "rule 'x': unknown named group(s) who",
        ),
        (
            '[language]\ncode = "en"\n[words]\n[[rule]]\nid = "x"\ntarget = "Person"\n'
            "pattern = '''met {{nobody}}'''\n",
            "unknown macro {{nobody}}",
        ),
    ],
)
def test_a_malformed_rule_file_names_itself(tmp_path: Path, text: str, message: str) -> None:
    folder = _rules_folder(tmp_path, text)
    with pytest.raises(GraphRuleError) as caught:
        load_graph_rules(folder)
    assert str(folder / "en.toml") in str(caught.value)
    assert message in str(caught.value)
