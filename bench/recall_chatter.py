"""Everyday talk for the recall bench: chatter, tool outputs and small facts that compete for room.

None of it uses a planted fact's words (no person, project, blocker, team, service or event names), so it
never answers a question by accident.
"""

from __future__ import annotations

import random

__all__ = ["EVERYDAY", "chatter", "reply", "tool_output", "tool_request"]

_ASKS = [
    "Can you tighten the wording of the release notes draft before lunch?",
    "I need a short summary of yesterday's standup for the channel.",
    "Please suggest three titles for the internal blog post about code review habits.",
    "What is a good way to phrase a reminder about filling in timesheets?",
    "Draft a polite reply declining the conference invitation for now.",
    "Give me a checklist for onboarding a new contractor to the repository.",
    "Rewrite this sentence so it sounds less formal: we kindly request your prompt attention.",
    "How should I structure a one-page proposal for a reading group at work?",
    "Turn these bullet points into a paragraph for the weekly update.",
    "Suggest a friendlier subject line for the survey email.",
    "List the pros and cons of moving the team lunch to Fridays.",
    "Help me explain semantic versioning to a new colleague in two sentences.",
    "What questions should I ask in a skip-level meeting?",
    "Make the tone of this feedback kinder without losing the point.",
]
_CONTEXT = [
    "The draft is long and repeats itself in places.",
    "People skim these messages, so shorter is better.",
    "Keep it light; it goes to the whole floor.",
    "No need for detail, just the gist.",
    "It should fit on a phone screen.",
    "The audience is mostly new joiners.",
    "I want it out before the afternoon.",
    "Avoid jargon where you can.",
]
_REPLIES = [
    "Here is a tighter version that keeps the main points and drops the repetition.",
    "Sure. I kept it short and friendly, and moved the call to action to the end.",
    "Done. I grouped the items into three headings so it reads quickly.",
    "Here are a few options, from the most neutral to the most playful.",
    "I rewrote it in plain words and removed the passive voice.",
    "Good idea. I suggest keeping the first line as a one-sentence summary.",
    "This version is about half as long and says the same thing.",
    "I would lead with the outcome, then the two reasons, then the ask.",
]
_DRAFT = [
    "We want reviews to be quick, kind and focused on the change at hand.",
    "Small pull requests get better feedback than large ones, so we split work early.",
    "Everyone on the floor is welcome to join, whatever their role.",
    "The goal is to share what we learned, not to present a finished answer.",
    "Please bring one example from your own week to discuss.",
    "Sessions last forty minutes and always end on time.",
    "We will rotate the facilitator every month so the load is shared.",
    "Notes go into the shared folder the same afternoon.",
    "If you cannot make it, reply to the thread and we will catch you up.",
    "Questions are welcome at any point, and there are no silly ones.",
    "Last time the discussion ran long, so this time we will keep a timer.",
    "The survey takes about five minutes and is anonymous.",
    "We read every answer and publish a summary within two weeks.",
    "Snacks are provided, but feel free to bring your own.",
]
_LOG_PATHS = ["/api/items", "/api/cart", "/api/profile", "/healthz", "/api/search", "/api/orders/recent"]
_LOG_LEVELS = ["INFO", "INFO", "INFO", "WARN", "DEBUG"]

# Small facts of a working day, noted by the note-taker and never asked about: (user's words, subject, object).
EVERYDAY = [
    ("I moved my dentist appointment to Thursday morning.", "user", "dentist appointment"),
    ("The coffee machine on the third floor works again.", "coffee machine", "third floor"),
    ("Lunch on Wednesdays is now at the noodle bar across the street.", "Wednesday lunch", "noodle bar"),
    ("My laptop battery is being replaced by IT next week.", "user's laptop", "battery replacement"),
    ("The office closes early on the last Friday of the month.", "office", "early closing"),
    ("I prefer meeting notes as bullet points rather than prose.", "user", "bullet-point notes"),
    ("The bike racks moved to the courtyard behind building B.", "bike racks", "courtyard"),
    ("I am working from home on Tuesdays from now on.", "user", "home office Tuesdays"),
    ("The printer on floor two needs a new toner cartridge.", "printer on floor two", "toner cartridge"),
    ("My calendar is blocked every afternoon for focus time.", "user", "focus time"),
    ("The wifi password for guests changes every Monday.", "guest wifi", "weekly password change"),
    ("I signed up for the Spanish course on Thursday evenings.", "user", "Spanish course"),
    ("The fire drill is always announced by email the day before.", "fire drill", "email announcement"),
    ("The parking garage takes only badge payments now.", "parking garage", "badge payments"),
    ("I use dark mode in every editor, so screenshots look dark.", "user", "dark mode"),
    ("The kitchen fridge is cleared out every Friday at five.", "kitchen fridge", "Friday clear-out"),
    ("My manager prefers updates in writing before the weekly call.", "user's manager", "written updates"),
    ("The library room can be booked for two hours at most.", "library room", "two-hour booking limit"),
]


def chatter(rng: random.Random) -> str:
    parts = [rng.choice(_ASKS), *rng.sample(_CONTEXT, rng.randint(1, 3))]
    if rng.random() < 0.6:
        parts += ["Here is the draft:", *rng.sample(_DRAFT, rng.randint(3, 6))]
    return " ".join(parts)


def reply(rng: random.Random) -> str:
    parts = rng.sample(_REPLIES, rng.randint(2, 3))
    if rng.random() < 0.5:
        parts += rng.sample(_DRAFT, rng.randint(3, 5))
    return " ".join(parts)


def tool_request(rng: random.Random) -> str:
    minutes = rng.randint(2, 90)
    return rng.choice([f"Can you pull the last {minutes} minutes of the API logs and tell me if anything looks off?",
                       f"Check the request log of the past {minutes} minutes for errors, please.",
                       f"Grab the log lines of the last {minutes} minutes from production and summarise them."])


def tool_output(rng: random.Random, stamp: str) -> str:
    lines = []
    for _ in range(rng.randint(10, 18)):
        lines.append(f"{stamp} {rng.choice(_LOG_LEVELS)} req=r{rng.getrandbits(28):07x} "
                     f"path={rng.choice(_LOG_PATHS)} status={rng.choice([200, 200, 200, 201, 304, 404, 500])} "
                     f"latency_ms={rng.randint(3, 900)} bytes={rng.randint(120, 48000)}")
    return "\n".join(lines)
