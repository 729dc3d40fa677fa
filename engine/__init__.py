"""The mechanism of forgetting as pure functions: no I/O, no clock, standard library only.

Time is always a timezone-aware `datetime` parameter; messages are plain dicts as the provider takes them.

Map (module -> what it owns):
    config       MechanismConfig: ceiling, sleep, landing share, episode sizes, defaults, plausible ratio
    messages     StoredMessage; request shape (chat_completions | responses | messages); item kinds; call ids;
                 instructions/history
    units        Unit, split_units, units_of, number_turns, current_turn, closed_units
    episodes     Episode, EpisodeState, Transition; start_leaving, acknowledge, seal, seal_without_facts,
                 forget, fade_step (each refuses an illegal move with errors.IllegalTransition)
    facts        Fact
    traces       Trace, encoding_trace, trace_weight, activation, significance, episode/fact activations
    salience     Act, ACT_FLOORS, salience = max(act's floor, intensity), weigh_episodes: what scales an encoding
    tone         ToneBaseline, tone_of, intensity: the user's usual tone per memory and departures from it
    cutting      BoundaryScores, cut (unit indexes), cut_stretch (units -> episodes), cut_closed (both paths)
    budget       TurnMeasure, Budget; measure_turns, history_budget, landing, plan_budget, budget_for
    fade         FadePlan, plan_fade, should_sleep, ceiling_passed, seal_leaving_without_facts,
                 apply_transitions
    sizing       estimate_tokens, correction_ratio, updated_ratio
    lane_names   the memory workflow's type, id, signal and search attribute names
    blocks       render_facts_block, render_note_ask,
                 note_tool_chat, note_tool_responses, NOTE_PARAMETERS, read_note_arguments -> NoteReading
    assembly     assemble (Chat Completions, Responses, Anthropic Messages), Block, blocks_role, repair_history
    anthropic    the Messages shape: looks_like_messages, Lethe's blocks in `system`, repair_messages,
                 note_tool_messages (from the one note tool), the note call in a reply
    anthropic_stream MessagesStreamFilter: a Messages stream with the note block held back
    request_rules problems(request): the providers' rules; empty means a provider accepts it
    replies      note_calls, read_note, without_note_calls: the report side of the note call
    decorate     decorate(request, StoredMemory, now=...) -> DecoratePlan: the whole hot-path decision
    errors       the error tree of every layer

The hot path:
    decorate(request, StoredMemory(messages, episodes, facts, traces), now=...,
             config=..., boundary_scores=..., count_text=..., size_ratio=..., sleep_owed=...) -> DecoratePlan
        .request (to send), .episodes / .transitions / .new_episodes / .new_traces (to persist),
        .note_ask_turns, .slept, .sleep_owed, .budget, .view_tokens, .projected_view, .estimated_tokens
        (raises errors.OverCeiling when the turn in progress alone passes the ceiling)
    report: read_note(response) -> NoteReading | None; acknowledge() each leaving episode when taken;
        without_note_calls(response) for the agent and for history; updated_ratio() for the model.
"""
