"""The ontology: the default graph/ontology.yaml, a user file extending it, and every
malformed file refused with its name and line (graph/ontology.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from memoracle.errors import InvalidInput
from memoracle.graph.ontology import (
    DEFAULT_SOURCE,
    Ontology,
    OntologyError,
    default_ontology,
    load_ontology,
)

ENTITY_TYPES = [
    "Person",
    "Organization",
    "Project",
    "Task",
    "Document",
    "Event",
    "Skill",
    "Device",
    "Service",
    "Tool",
    "Infrastructure",
    "Concept",
    "Location",
    "Pet",
]
RELATION_TYPES = [
    "reports_to",
    "has_owner",
    "includes",
    "depends_on",
    "manages",
    "uses",
    "integrated_with",
    "located_at",
    "fixes",
    "monitors",
    "works_at",
    "lives_in",
    "family_of",
    "knows",
]


def test_the_default_has_the_listed_types_each_described_in_one_line() -> None:
    ontology = load_ontology(None)
    assert set(ENTITY_TYPES) <= set(ontology.entity_types)
    assert set(RELATION_TYPES) <= set(ontology.relation_types)
    for kind in (*ontology.entity_types.values(), *ontology.relation_types.values()):
        assert kind.description and "\n" not in kind.description
        assert re.fullmatch(rf"{re.escape(DEFAULT_SOURCE)}:\d+", kind.origin)


def test_the_default_is_read_once() -> None:
    assert load_ontology(None) is default_ontology() is load_ontology()


@pytest.mark.parametrize(
    ("relation", "source", "target", "allowed"),
    [
        ("works_at", "Person", "Organization", True),
        ("works_at", "Organization", "Person", False),
        ("reports_to", "Person", "Person", True),
        ("lives_in", "Pet", "Location", True),
        ("has_owner", "Pet", "Person", True),
        ("uses", "Person", "Tool", True),
        ("uses", "Person", "Location", False),
        ("includes", "Project", "Document", True),  # no constraint: any types
        ("located_at", "Organization", "Location", True),
        ("no_such_relation", "Person", "Person", False),
        ("knows", "Person", "Alien", False),
    ],
)
def test_relations_allow_their_source_and_target_types(
    relation: str, source: str, target: str, allowed: bool
) -> None:
    assert default_ontology().allows(relation, source, target) is allowed


USER_FILE = """\
# Cooking, on top of the default.
entity_types:
  Recipe:
    description: A dish and how to make it.
relation_types:
  cooks:
    description: The source makes the target.
    source: Person
    target: [Recipe]
  tastes_like:
    description: Any type to any type.
"""


def test_a_user_file_extends_the_default(tmp_path: Path) -> None:
    path = tmp_path / "ontology.yaml"
    path.write_text(USER_FILE, encoding="utf-8")
    ontology = load_ontology(path)
    assert set(default_ontology().entity_types) < set(ontology.entity_types)
    assert set(default_ontology().relation_types) < set(ontology.relation_types)
    assert list(ontology.entity_types)[-1] == "Recipe"
    assert ontology.entity_types["Recipe"].origin == f"{path}:3"
    cooks = ontology.relation_types["cooks"]
    assert (cooks.sources, cooks.targets, cooks.origin) == (("Person",), ("Recipe",), f"{path}:6")
    assert ontology.allows("cooks", "Person", "Recipe")
    assert not ontology.allows("cooks", "Recipe", "Person")
    assert ontology.allows("tastes_like", "Recipe", "Pet")
    assert ontology.allows("works_at", "Person", "Organization")  # the default still holds


def test_an_empty_user_file_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "ontology.yaml"
    path.write_text("# nothing yet\n", encoding="utf-8")
    ontology = load_ontology(path)
    assert isinstance(ontology, Ontology)
    assert ontology.entity_types == default_ontology().entity_types


# (file text, line named in the message, words the message carries)
BAD: list[tuple[str, int, str]] = [
    ("entity_types:\n  Recipe: [unclosed\n", 3, "not valid YAML"),
    ("entity_types:\n  Recipe:\n\tdescription: tab\n", 3, "not valid YAML"),
    ("entity_type:\n  Recipe:\n    description: x\n", 1, "unknown key 'entity_type'"),
    (
        "entity_types:\n  Recipe:\n    description: x\n    colour: red\n",
        4,
        "unknown key 'colour' in entity type 'Recipe'",
    ),
    (
        "relation_types:\n  cooks:\n    description: x\n    source: Person\n"
        "    target: [Recipe, Dish]\n",
        5,
        "unknown entity type 'Recipe'",
    ),
    (
        "relation_types:\n  cooks:\n    description: x\n    source: Chef\n",
        4,
        "relation 'cooks' source names unknown entity type 'Chef'",
    ),
    (
        "entity_types:\n  Person:\n    description: Someone else.\n",
        2,
        f"entity type 'Person' is already defined ({DEFAULT_SOURCE}:",
    ),
    (
        "relation_types:\n  uses:\n    description: Mine.\n",
        2,
        f"relation 'uses' is already defined ({DEFAULT_SOURCE}:",
    ),
    (
        "entity_types:\n  Recipe:\n    description: x\n  Recipe:\n    description: y\n",
        4,
        "'Recipe' is given twice in entity_types (first at line 2)",
    ),
    ("entity_types:\n  Recipe:\n", 2, "entity type 'Recipe' needs a description"),
    ("entity_types:\n  Recipe:\n    description: 42\n", 3, "description must be a line of text"),
    ("entity_types:\n  recipe:\n    description: x\n", 2, "use CamelCase"),
    ("relation_types:\n  Cooks:\n    description: x\n", 2, "use snake_case"),
    ("entity_types:\n  - Recipe\n", 2, "entity_types must be a mapping"),
    ("relation_types:\n  cooks:\n    description: x\n    source: []\n", 4, "empty list"),
    ("- just\n- a list\n", 1, "the file must be a mapping"),
]


@pytest.mark.parametrize(("text", "line", "words"), BAD)
def test_a_bad_user_file_names_itself_and_the_line(
    tmp_path: Path, text: str, line: int, words: str
) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(OntologyError) as caught:
        load_ontology(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:{line}: "), message
    assert words in message


def test_a_missing_user_file_is_an_invalid_input(tmp_path: Path) -> None:
    path = tmp_path / "nowhere.yaml"
    with pytest.raises(InvalidInput, match=re.escape(f"{path}: no such ontology file")):
        load_ontology(path)
