"""The recall bench's fact families: what a planted fact says, how it changes, and how it is asked about.

Every value is drawn once per conversation, so a value's words point at one fact only: a check that finds a
fact's key words together in one sentence of a request has found that fact.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FAMILIES", "TWO_HOP", "Family", "TwoHop"]

PEOPLE = ["Dana", "Priya", "Tomasz", "Ingrid", "Kofi", "Mireille", "Oskar", "Yuki", "Rafael", "Leila", "Bjorn",
          "Amara", "Caspian", "Noor", "Henrik", "Saoirse", "Matteo", "Zanele", "Ilse", "Dmitri", "Aurelio", "Fenna",
          "Gustavo", "Hiroko", "Ezinne", "Lorcan", "Marisol", "Torvald", "Wanjiru", "Xiomara"]
# A project and the other words a paraphrased question uses for it.
PROJECTS = {"checkout migration": "move of the checkout to the new stack",
            "search reindex": "rebuild of the search index",
            "billing rewrite": "new billing code", "warehouse sync": "stock feed between the warehouses",
            "mobile onboarding": "first-run screens of the app", "fraud scoring": "model that flags risky payments",
            "invoice export": "export of invoices to accounting", "loyalty ledger": "points balance service",
            "partner gateway": "API the resellers call", "single sign-on rollout": "company-wide SSO launch",
            "retention cleanup": "purge of expired customer data", "pricing experiment": "price A/B test"}
BLOCKERS = ["tax table", "legal sign-off", "sandbox credentials", "schema freeze", "load test report",
            "security review", "Kafka upgrade", "cart page redesign", "currency rounding bug", "DNS cutover",
            "vendor contract renewal", "GDPR assessment", "accessibility audit", "queue backlog alarm",
            "certificate rotation", "data warehouse quota"]
TEAMS = {"platform team": "infrastructure group", "growth team": "acquisition squad", "payments team": "billing folks",
         "data team": "analytics crew", "support tooling team": "helpdesk tools people",
         "mobile team": "app developers", "security team": "appsec group", "logistics team": "shipping crew"}
SERVICES = {"ledger service": "accounting backend", "image resizer": "thumbnail generator",
            "notification worker": "push and email sender", "rate limiter": "request throttle",
            "session store": "login state cache", "feature flag server": "toggle backend",
            "report scheduler": "nightly report job", "address validator": "postcode checker"}
EVENTS = {"quarterly planning": "planning session for next quarter", "vendor demo": "supplier presentation",
          "architecture review": "design board meeting", "launch retrospective": "post-launch look back",
          "customer advisory call": "call with the client council", "budget review": "spending check-in",
          "hiring panel": "interview loop", "incident drill": "outage rehearsal"}
CITIES = ["Lisbon", "Rotterdam", "Gdansk", "Valencia", "Tampere", "Brno", "Porto", "Lyon", "Graz", "Malmo"]
MONTHS = ["March", "April", "May", "June"]


@dataclass(frozen=True)
class Family:
    """A kind of planted fact. Slots are filled by the generator; `value` is the slot that an update changes."""

    name: str
    slots: tuple[str, ...]
    value: str
    statement: str   # the user's words, also the note
    update: str      # the user's words when the value changes (the old value is not repeated)
    subject: str     # which slot is the triple's subject, which its object
    object: str
    anchor: str      # the slot that names what is asked about; with `value`, the fact's key words
    direct: str
    paraphrased: str


FAMILIES: dict[str, Family] = {f.name: f for f in (
    Family("owner", ("person", "project"), "person", "{person} owns the {project}.",
           "{person} now owns the {project}.", "person", "project", "project",
           "Who owns the {project}?", "Which colleague is responsible for the {project_alias}?"),
    Family("blocker", ("project", "blocker"), "blocker", "The {project} is blocked on the {blocker}.",
           "The {project} is now blocked on the {blocker} instead.", "project", "blocker", "project",
           "What is the {project} blocked on?", "What is holding up the {project_alias}?"),
    Family("order", ("order", "city", "date"), "date", "Order {order} ships from the {city} warehouse on {date}.",
           "Order {order} now ships on {date}.", "order", "date", "order",
           "When does order {order} ship from the {city} warehouse?",
           "On which day does the {city} depot send out {order}?"),
    Family("budget", ("team", "amount"), "amount", "The {team} budget for next quarter is {amount} dollars.",
           "The {team} budget for next quarter is now {amount} dollars.", "team", "amount", "team",
           "What is the {team} budget for next quarter?",
           "How much money can the {team_alias} spend in the coming three months?"),
    Family("host", ("service", "host"), "host", "The {service} runs on host {host}.",
           "The {service} was moved and now runs on host {host}.", "service", "host", "service",
           "Which host does the {service} run on?", "On which machine is the {service_alias} deployed?"),
    Family("meeting", ("event", "date"), "date", "The {event} is scheduled for {date}.",
           "The {event} has been moved to {date}.", "event", "date", "event",
           "When is the {event} scheduled?", "What day did we set for the {event_alias}?"),
    Family("lead", ("person", "team"), "person", "{person} leads the {team}.", "{person} now leads the {team}.",
           "person", "team", "team", "Who leads the {team}?", "Who is the manager of the {team_alias}?"),
    Family("maintainer", ("person", "service"), "person", "{person} maintains the {service}.",
           "{person} now maintains the {service}.", "person", "service", "service",
           "Who maintains the {service}?", "Who looks after the {service_alias}?"),
)}


@dataclass(frozen=True)
class TwoHop:
    """Two facts joined by a bridge entity, and the question that needs both."""

    bridge: str      # the family naming the person's thing (owner, lead, maintainer)
    target: str      # the family saying something about that thing
    shared: str      # the slot both facts share
    question: str


TWO_HOP = (
    TwoHop("owner", "blocker", "project", "What is {person}'s project blocked on?"),
    TwoHop("lead", "budget", "team", "How big is next quarter's budget of the team {person} leads?"),
    TwoHop("maintainer", "host", "service", "Which host runs the service that {person} maintains?"),
)
