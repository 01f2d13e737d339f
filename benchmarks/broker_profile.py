"""Where a RabbitMQ node's time goes over a window: its schedulers' states and its processes' work.

``boot_bench.py --profile-broker`` asks each node of its own broker
(``tests/support/rabbit_cluster.py``) through ``erl_call``, at the start
and at the end of the boots:

- the Erlang runtime's microstate accounting (``msacc``): milliseconds of
  each scheduler thread kind in each state but sleep (``emulator``: running
  Erlang code; ``gc``; ``port``: sockets and files; ``check_io``; ``aux``;
  ``other``; a dirty I/O scheduler's ``emulator`` is file I/O, fsyncs
  included, which is wall time, not CPU);
- the reductions (Erlang's unit of work) of every process, summed by kind:
  a quorum queue's Raft members (``ra: ...``, by queue: compute hosts',
  reply, fanout or the queue's name), channels, readers, the Ra WAL, ...

It changes nothing on the node but turning microstate accounting on for
the window.
"""
from __future__ import annotations

import re

# Reductions of every process now, kept on the node; microstate accounting on.
START = """
persistent_term:put(cp_bench_reductions, maps:from_list(
    [{P, R} || P <- processes(), {reductions, R} <- [erlang:process_info(P, reductions)]])),
msacc:start(), ok
"""

# Microstates since START, and each process's reductions since, by its label:
# a registered name, else its initial call. Lines "kind<TAB>label<TAB>amount".
REPORT = """
msacc:stop(),
Before = persistent_term:get(cp_bench_reductions),
persistent_term:erase(cp_bench_reductions),
Label = fun(P) ->
    case erlang:process_info(P, [registered_name, dictionary, initial_call]) of
        undefined -> dead;
        [{registered_name, Name}, {dictionary, D}, {initial_call, Call}] ->
            Init = proplists:get_value('$initial_call', D, Call),
            case {Init, Name} of
                {{ra_server_proc, _, _}, N} when is_atom(N), N =/= [] -> {ra, N};
                {_, N} when is_atom(N), N =/= [] -> N;
                _ -> Init
            end
    end
end,
Work = lists:foldl(fun(P, Acc) when P =:= self() -> Acc;   % this report's own work
                      (P, Acc) ->
    case erlang:process_info(P, reductions) of
        {reductions, R} ->
            Done = R - maps:get(P, Before, 0),
            case Done > 0 of
                true -> maps:update_with(Label(P), fun(X) -> X + Done end, Done, Acc);
                false -> Acc
            end;
        undefined -> Acc
    end
end, #{}, processes()),
States = lists:foldl(fun(#{type := T, counters := C}, Acc) ->
    maps:fold(fun(sleep, _, A) -> A;
                 (S, V, A) -> maps:update_with({T, S}, fun(X) -> X + V end, V, A)
              end, Acc, C)
end, #{}, msacc:stats()),
msacc:reset(),
lists:flatten(
    [io_lib:format("state\\t~p.~p\\t~p~n", [T, S, V]) || {{T, S}, V} <- maps:to_list(States)] ++
    [io_lib:format("work\\t~0p\\t~p~n", [L, V]) || {L, V} <- maps:to_list(Work)])
"""


def start(nodes) -> None:
    """Begin the window on each node (``PrivateRabbit``)."""
    for node in nodes:
        node.eval(START)


def _queue_kind(name: str) -> str:
    """A quorum queue's Raft member's registered name (vhost and queue) as its kind of queue."""
    if 'reply_' in name:
        return 'ra: reply queues'
    if '_fanout' in name:
        return 'ra: fanout queues'
    if re.search(r'compute\.[^.]+$', name):
        return "ra: compute hosts' queues"
    return 'ra: ' + name.split('_', 3)[-1] if name.startswith('cp_') else 'ra: ' + name


def _kind(label: str) -> str:
    found = re.fullmatch(r"\{ra,'?(.*?)'?\}", label)
    if found:
        return _queue_kind(found.group(1))
    found = re.fullmatch(r'\{(\w+),\w+,\d+\}', label)      # an initial call
    return found.group(1) if found else label


def report(nodes) -> dict[str, dict]:
    """Per node: ``states`` {thread.state: ms} and ``work`` {kind: reductions}, largest first."""
    found = {}
    for node in nodes:
        text = node.eval(REPORT)
        # erl_call prints the string as an Erlang term: quoted, escaped.
        text = text.strip().strip('"').encode().decode('unicode_escape')
        states: dict[str, float] = {}
        work: dict[str, int] = {}
        for line in text.splitlines():
            kind, label, amount = line.split('\t')
            if kind == 'state':
                states[label] = states.get(label, 0.0) + int(amount) / 1000
            else:
                work[_kind(label)] = work.get(_kind(label), 0) + int(amount)
        found[node.node] = {
            'states': dict(sorted(states.items(), key=lambda kv: -kv[1])),
            'work': dict(sorted(work.items(), key=lambda kv: -kv[1]))}
    return found


def render(profile: dict[str, dict], count: float, window: str, unit: str,
           top: int = 12) -> str:
    """Each node's busy scheduler states and its largest kinds of work, per ``unit``."""
    lines = [f'RabbitMQ nodes {window} (msacc busy ms; reductions per {unit}):']
    for node, seen in profile.items():
        states = ', '.join(f'{k} {v:.0f}' for k, v in seen['states'].items() if v >= 1)
        total = sum(seen['work'].values())
        lines.append(f'  {node}: {states}')
        lines.append(f'    reductions {total / count:,.0f} per {unit}: ' + ', '.join(
            f'{k} {100 * v / total:.0f} %' for k, v in list(seen['work'].items())[:top]))
    return '\n'.join(lines)
