"""Training sentences for the learned capture decision, made from templates and word
lists written for this repository (EN, RU, FR, ES; licensed with the repo).

Label 1: something a careful person would keep about the speaker or someone they know:
a durable fact, a preference, a plan, a decision, an event, a relation, said informally
and often without the words the rules wait for. Label 0: what is worth nothing later:
reactions and compliments, acknowledgements, small talk, questions, hypotheticals,
general remarks about the world, hedged opinions, an assistant's offers.

`generate(seed)` is deterministic: the same seed gives the same sentences in the same
order. Used by `bench/train_capture.py`; never reads any evaluation set.
"""

from __future__ import annotations

import random
import re
from typing import Any

from capture_words import CHAT, HARD, OTHER

# Each language: slot word lists, then positive and negative templates. A template's
# {slot} takes a random word of that slot; a kind says which head it trains (fact,
# preference, event).
LANGS: dict[str, dict[str, Any]] = {
    "en": {
        "slots": {
            "name": ["Noor", "Tomás", "Priya", "Jake", "Mila", "Oskar", "Leila", "Dan", "Ines"],
            "kin": [
                "sister",
                "brother",
                "mom",
                "dad",
                "wife",
                "husband",
                "son",
                "daughter",
                "best friend",
                "boss",
                "roommate",
                "cousin",
                "grandma",
                "neighbor",
            ],
            "job": [
                "nurse",
                "data engineer",
                "teacher",
                "plumber",
                "UX designer",
                "lawyer",
                "barista",
                "accountant",
                "vet",
                "pilot",
            ],
            "org": [
                "Siemens",
                "Fernwood Labs",
                "a small bakery",
                "the city hospital",
                "Deloitte",
                "a startup in Berlin",
                "the public library",
                "Spotify",
            ],
            "city": [
                "Lisbon",
                "Rotterdam",
                "Denver",
                "Kyoto",
                "Leeds",
                "Montreal",
                "Porto",
                "Austin",
                "Gdańsk",
            ],
            "thing": [
                "spicy food",
                "jazz",
                "hiking",
                "board games",
                "sushi",
                "horror movies",
                "running",
                "black coffee",
                "pottery",
                "crowds",
                "early mornings",
            ],
            "activity": [
                "a pottery class",
                "a half marathon",
                "a camping trip",
                "a job interview",
                "a dentist appointment",
                "a charity run",
                "a concert",
                "a support group meeting",
                "a salsa workshop",
                "a family dinner",
            ],
            "past": [
                "yesterday",
                "last week",
                "last month",
                "on Saturday",
                "two years ago",
                "last summer",
                "this morning",
                "in 2019",
            ],
            "future": [
                "next week",
                "tomorrow",
                "on Friday",
                "next month",
                "in June",
                "this weekend",
                "after Christmas",
            ],
            "pet": ["dog", "cat", "parrot", "rabbit", "hamster"],
            "petname": ["Poivre", "Biscuit", "Luna", "Max", "Kiwi"],
            "device": ["MacBook Air M3", "Pixel 8", "Kindle", "ThinkPad X1", "Switch"],
            "adj": [
                "amazing",
                "awesome",
                "great",
                "so cool",
                "lovely",
                "wild",
                "nice",
                "beautiful",
                "fun",
                "inspiring",
            ],
            "topic": [
                "the weather",
                "traffic",
                "Mondays",
                "social media",
                "prices these days",
                "the news",
                "this heat",
            ],
            "verb": ["paint", "cook", "travel", "read", "swim", "draw", "garden", "write"],
        },
        "pos": [
            ("fact", "I work as a {job} at {org}."),
            ("fact", "Been a {job} for about ten years now."),
            ("fact", "just started at {org} as a {job}"),
            ("fact", "We moved to {city} {past}."),
            ("fact", "My {kin} {name} lives in {city}."),
            ("fact", "{name} is my {kin}, she teaches at {org}."),
            ("fact", "My {kin} just got a job at {org}."),
            ("fact", "Got a {pet} named {petname}, he's three."),
            ("fact", "Switched to a {device} {past}."),
            ("fact", "I have two kids, both in primary school."),
            ("fact", "I'm allergic to peanuts."),
            ("fact", "I've been vegetarian since college."),
            ("fact", "I grew up in {city}."),
            ("fact", "my {kin} and I are training for {activity} together"),
            ("fact", "I've been learning to {verb} for a few months now."),
            ("fact", "I finally finished my degree in nursing."),
            ("fact", "I volunteer at a shelter on weekends."),
            ("preference", "I really love {thing}."),
            ("preference", "Can't stand {thing}, honestly."),
            ("preference", "{thing} is my absolute favorite thing."),
            ("preference", "I'm a huge fan of {thing}."),
            ("preference", "not really into {thing} tbh"),
            ("preference", "{thing} always calms me down."),
            ("event", "I went to {activity} {past} and it was {adj}."),
            ("event", "Did {activity} {past}, still sore lol"),
            ("event", "I'm going to {activity} {future}."),
            ("event", "I signed up for {activity} {future}."),
            ("event", "My {kin} had a baby {past}!"),
            ("event", "{name} and I broke up {past}."),
            ("event", "I lost my job at {org} {past}."),
            ("event", "We adopted a {pet} {past}."),
            ("event", "Planning to visit {city} {future} with my {kin}."),
            ("event", "Ran my first 10k {past}!"),
            ("event", "I painted a sunset over the lake {past}."),
            ("fact", "We decided to send our son to a Montessori school."),
            ("fact", "I decided to quit my job at {org}."),
            ("fact", "I'm researching adoption agencies, it's been a dream to have a family."),
            ("fact", "I'm thinking of going back to school for counseling."),
        ],
        "neg": [
            "That's {adj}!",
            "Wow, {adj}!",
            "Sounds {adj}, good for you!",
            "I'm so happy for you!",
            "I'm so proud of you, {name}.",
            "You're doing {adj}, keep it up!",
            "Thanks, {name}! That means a lot.",
            "Haha, totally.",
            "ok cool",
            "Got it, thanks.",
            "Sure, no problem.",
            "lol same",
            "Good morning!",
            "Hey {name}, how have you been?",
            "How was your weekend?",
            "What do you like to {verb}?",
            "Have you ever tried {thing}?",
            "Did you go to {activity}?",
            "What made you want to {verb}?",
            "If I won the lottery I'd move to {city}.",
            "Maybe one day I'll try {thing}.",
            "Imagine living in {city}, that would be {adj}.",
            "{topic} is crazy lately.",
            "I think {thing} is overrated, but who knows.",
            "It's important to take care of yourself.",
            "Life can be hard sometimes.",
            "That must have been tough.",
            "I can imagine how you felt.",
            "You should totally try {thing}!",
            "Take care and talk soon!",
            "Let me know if you need anything.",
            "I'd be glad to help you plan {activity}.",
            "Would you like me to look up flights to {city}?",
            "I can make a checklist for {activity} if you want.",
            "Here are a few ideas for {activity}.",
            "Good luck with {activity}!",
            "That picture is {adj}!",
            "Yeah, {topic} can be exhausting.",
            "It's so nice to chat with you.",
            "I agree, {thing} is {adj}.",
        ],
    },
    **OTHER,
}

_SLOT = re.compile(r"\{(\w+)\}")


def _fill(template: str, slots: dict[str, list[str]], rng: random.Random) -> str:
    text = _SLOT.sub(lambda m: rng.choice(slots[m.group(1)]), template)
    return text[:1].upper() + text[1:] if rng.random() < 0.8 else text[:1].lower() + text[1:]


def generate(seed: int = 13, per_template: int = 6) -> list[dict[str, Any]]:
    """Every language's templates filled `per_template` times (duplicates dropped):
    ``{"text", "lang", "label", "kind"}``, in a fixed order for a fixed seed."""
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for lang, spec in LANGS.items():
        slots = spec["slots"]
        pos = spec["pos"] + CHAT[lang]["pos"]
        items = [(1, kind, t) for kind, t in pos] + [(0, "", t) for t in spec["neg"]]
        items += [(0, "", t) for t in CHAT[lang]["neg"] + HARD[lang]]
        for label, kind, template in items:
            for _ in range(per_template):
                text = _fill(template, slots, rng)
                if text in seen:
                    continue
                seen.add(text)
                out.append({"text": text, "lang": lang, "label": label, "kind": kind})
    return out
