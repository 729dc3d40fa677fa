"""Salience: how strongly an episode is encoded, from its act (what kind of moment it was) and its intensity
(how forcefully the user said it, against their own usual tone: `engine.tone`).

    salience = max(floor of the act, intensity), within [MIN_SALIENCE, 1]

Salience scales the encoding trace and nothing else: the stored trace keeps its score of 1 (traces are never
edited) and activation multiplies it by the episode's salience once the lane has judged it. Until then, or
with salience off, the encoding counts 1, as before.

Why (0, 1]: the encoding was already the strongest a trace can be, so salience only lowers the start of what
matters less; it never lifts an episode above full strength, so fact traces (scores up to 1) still weigh as
much against it as before. It never reaches 0: activation stays positive and still falls with age, so among
episodes of equal salience the fade still picks the older first, and every episode still has a start. Since a
trace weighs score / sqrt(minutes), an episode stays above any activation level for salience² times as long:
a routine lookup at 0.25 drops below a level in a sixteenth of the time a correction takes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from engine.episodes import Episode
from engine.tone import ToneBaseline, intensity

__all__ = ["ACT_FLOORS", "MAX_SALIENCE", "MIN_SALIENCE", "Act", "Weighed", "encoding_factor", "salience",
           "weigh_episodes"]


class Act(StrEnum):
    """What kind of moment an episode was. Who acted matters: the user's correction outranks the assistant's."""

    # The user sets the record straight ("no, it moved to Thursday"): the highest authority there is.
    CORRECTION = "correction"
    # Something was agreed, chosen, approved or rejected.
    DECISION = "decision"
    # The assistant takes back or fixes something it said itself.
    SELF_CORRECTION = "self_correction"
    # Ordinary work: a request and what was done for it.
    TASK = "task"
    # A routine question answered or a value looked up.
    LOOKUP = "lookup"
    # Greetings, thanks, chat with nothing to keep.
    SMALL_TALK = "small_talk"


# Each act's floor: a correction stays heavy even when said flatly; a lookup starts low unless said forcefully.
ACT_FLOORS: Mapping[Act, float] = {
    Act.CORRECTION: 1.0,
    Act.DECISION: 0.9,
    Act.SELF_CORRECTION: 0.7,
    Act.TASK: 0.5,
    Act.LOOKUP: 0.25,
    Act.SMALL_TALK: 0.15,
}
MIN_SALIENCE = min(ACT_FLOORS.values())
MAX_SALIENCE = 1.0


def salience(act: Act, intensity: float) -> float:
    """The higher of the act's floor and the intensity, within [MIN_SALIENCE, MAX_SALIENCE]."""
    if intensity != intensity:  # NaN: no measure of tone, so the act alone decides
        intensity = 0.0
    return min(MAX_SALIENCE, max(MIN_SALIENCE, ACT_FLOORS[act], intensity))


def encoding_factor(stored: float | None, *, enabled: bool) -> float:
    """What an episode's encoding trace is multiplied by: its stored salience when judged and salience is on,
    else 1 (not judged yet, or salience off: the encoding as it always was)."""
    if not enabled or stored is None:
        return 1.0
    return min(MAX_SALIENCE, max(MIN_SALIENCE, stored))


@dataclass(frozen=True)
class Weighed:
    """One episode's salience as the lane stores it: its act, the intensity of the user's tone, their salience."""

    episode_id: str
    act: Act
    intensity: float
    salience: float


def weigh_episodes(
    episodes: Sequence[Episode], acts: Sequence[Act], user_tones: Sequence[tuple[int, Mapping[str, float]]],
    baseline: ToneBaseline,
) -> tuple[list[Weighed], ToneBaseline]:
    """Each episode's salience from its judged act and its user messages' tones, `(seq, tone)` in seq order,
    against the baseline as it stood before the episode; returns them with the baseline moved past them.

    An episode whose messages the baseline already holds (one cut out of order) is judged against the baseline
    as it is."""
    weighed: list[Weighed] = []
    tones = sorted(user_tones, key=lambda pair: pair[0])
    for episode, act in sorted(zip(episodes, acts, strict=True), key=lambda pair: pair[0].first_seq):
        for seq, tone in tones:
            if seq < episode.first_seq:
                baseline = baseline.fold(tone, seq=seq)
        own = [tone for seq, tone in tones if episode.first_seq <= seq <= episode.last_seq]
        felt = intensity(baseline, own)
        weighed.append(Weighed(episode.id, act, round(felt, 4), round(salience(act, felt), 4)))
        for seq, tone in tones:
            if seq <= episode.last_seq:
                baseline = baseline.fold(tone, seq=seq)
    return weighed, baseline
