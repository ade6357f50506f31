"""The graph passes as they were before each became one sweep: the oracle of
test_pass_scaling.py.

Each rewrite here edits the graph one change at a time (`replace_uses`, `insert_op`,
`remove_ops`, each a scan of the whole graph: quadratic in all, fine for the small
graphs of the tests), and the simplification rounds repeat until none finds work. The
linear passes of runtime/passes must give the same graphs, names and notes included.
Rules and helpers the rewrite kept as they were (algebraic rules, what folds, fusion
groups, the memory plan) are the modules' own.
"""
from runtime.graph import clone_graph
from runtime.ops import registry
from runtime.passes import (algebraic, constant_folding, cse, drop_feeds, each_graph, fusion,
                            known_op, memory, parallel, quantize, rebuild_inputs,
                            rematerialization,
                            subgraph_feeds)
from runtime.shapes import TensorShape
from runtime.dtypes import as_dtype

ROUNDS = 4


def optimize(graph, enabled):
    graph = clone_graph(graph, graph.outer_graph)
    simplify = [module for name, module in [
        ("rematerialization", rematerialize), ("pruning", prune),
        ("algebraic", simplify_algebra), ("quantize", quantize.run), ("constant_folding", fold),
        ("cse", merge)]
        if name in enabled]
    for _ in range(ROUNDS):
        changed = False
        for run in simplify:
            changed = run(graph) or changed
        if not changed:
            break
    for name, run in [("pruning", prune), ("fusion", fuse), ("parallel", schedule),
                      ("memory", plan_memory)]:
        if name in enabled:
            run(graph)
    return graph


# -- cse: one duplicate at a time ----------------------------------------------------------

def merge(graph):
    def one(graph):
        seen, duplicates = {}, []
        for op in graph.ops:
            key = cse._key(op)
            if key is None:
                continue
            first = seen.setdefault(key, op)
            if first is not op:
                graph.replace_op(op, first)
                duplicates.append(op)
        graph.remove_ops(duplicates)
        return bool(duplicates)
    return each_graph(graph, one)


# -- algebraic: one replace_uses per rewrite -----------------------------------------------

def simplify_algebra(graph):
    def one(graph):
        changed = False
        for op in list(graph.ops):
            rule = algebraic._RULES.get(op.type)
            if rule is None or op.control_inputs:
                continue
            result = rule(op)
            if result is True:
                changed = True
            elif result is not None:
                graph.replace_uses({op.outputs[0]: result})
                changed = True
        return changed
    return each_graph(graph, one)


# -- constant folding: remove, insert and replace per folded op ------------------------------

def fold(graph):
    return each_graph(graph, _fold_into_subgraphs) | each_graph(graph, _fold)


def _insert_const(graph, position, value, name, origin):
    op = graph.insert_op(position, registry.get("const"), [], {"value": value},
                         [(TensorShape(value.shape), as_dtype(value.dtype))], name, origin)
    return op.outputs[0]


def _fold(graph):
    changed = False
    for op in list(graph.ops):
        if not constant_folding._foldable(op):
            continue
        arrays = constant_folding._evaluate(op)
        if arrays is None:
            continue
        position = graph.ops.index(op)
        graph.remove_ops([op])
        consts = [_insert_const(graph, position + i, a, op.name, op.origin)
                  for i, a in enumerate(arrays)]
        graph.replace_uses(dict(zip(op.outputs, consts)))
        changed = True
    return changed


def _fold_into_subgraphs(graph):
    changed = False
    for op in graph.ops:
        for sub, pairs in subgraph_feeds(op):
            replacements = {}
            for ph, i in pairs:
                if i is None or op.inputs[i].op.type != "const":
                    continue
                source = op.inputs[i].op
                read = any(t is ph for o in sub.ops for t in o.inputs) or any(
                    t is ph for t in sub.outputs)
                if read:
                    replacements[ph] = _insert_const(
                        sub, sub.ops.index(ph.op) + 1, source.attrs["value"], source.name,
                        source.origin)
            if replacements:
                sub.replace_uses(replacements)
                changed = True
    return changed


# -- pruning: feeds, stacks, then dead ops, once -------------------------------------------

def prune(graph):
    return each_graph(graph, _prune)


def _prune(graph):
    changed = _drop_unread_feeds(graph)
    changed = _drop_unread_stacks(graph) or changed
    roots = list(graph.control_outputs)
    roots += [op for op in graph.ops if op.stateful or op.type in ("placeholder", "capture")]
    needed = set(graph.needed_ops(graph.outputs, (), roots))
    dead = [op for op in graph.ops if op not in needed]
    graph.remove_ops(dead)
    return changed or bool(dead)


def _drop_unread_feeds(graph):
    changed = False
    for op in graph.ops:
        subs = op.subgraphs()
        if not subs:
            continue
        unread = set()
        for sub in subs:
            read = {t for o in sub.ops for t in o.inputs}
            read.update(sub.outputs)
            unread.update(t for t in list(sub.inputs) + [i for _, i in sub.captures]
                          if t not in read)
        if unread:
            changed = drop_feeds(op, unread) or changed
    return changed


def _drop_unread_stacks(graph):
    read = {t for op in graph.ops for t in op.inputs}
    read.update(graph.outputs)
    changed = False
    for op in graph.ops:
        if op.type != "while" or not known_op(op) or not op.attrs.get("stacks"):
            continue
        n, count, body = op.attrs["n_vars"], op.attrs["stacks"], op.attrs["body_graph"]
        pairs = [op.outputs[n + 1 + 2 * k:n + 3 + 2 * k] for k in range(count)]
        keep = [k for k, pair in enumerate(pairs) if any(t in read for t in pair)]
        if len(keep) == count:
            continue
        body.outputs = body.outputs[:n] + [body.outputs[n + k] for k in keep]
        body._changed()
        op.outputs = op.outputs[:n + 1] + tuple(t for k in keep for t in pairs[k])
        for i, t in enumerate(op.outputs):
            t.index = i
        op.attrs = dict(op.attrs, stacks=len(keep))
        changed = True
    if changed:
        graph._changed()
    return changed


# -- fusion: remove, insert and replace per group ------------------------------------------

def fuse(graph):
    def one(graph):
        groups = fusion._groups(graph)
        for members in groups:
            root = members[-1]
            position = graph.ops.index(root) - (len(members) - 1)
            graph.remove_ops(members)
            made = fusion._fused_op(graph, members)
            graph.ops.insert(position, made)
            graph._changed()
            graph.replace_uses({root.outputs[0]: made.outputs[0]})
        return bool(groups)
    return each_graph(graph, one)


# -- parallel: every pair of heavy ops ------------------------------------------------------

def schedule(graph):
    from runtime import config
    if config.get_inter_op_threads() <= 1:
        return False
    return each_graph(graph, _schedule)


def _schedule(graph):
    found = _parallel_ops(graph)
    if not found:
        return False
    for op in found:
        op.notes = dict(op.notes or {}, **{"async": True})
    graph.ops = parallel._interleave(graph.ops, found)
    graph._changed()
    return True


def _parallel_ops(graph):
    heavy = [op for op in graph.ops if not op.stateful and not op.subgraphs()
             and len(op.outputs) == 1 and parallel.cost(op) >= parallel.HEAVY]
    if len(heavy) < 2:
        return set()
    index = {op: i for i, op in enumerate(heavy)}
    ancestors = {}
    for op in graph.ops:
        mask = 0
        for dep in [t.op for t in op.inputs] + list(op.control_inputs):
            mask |= ancestors.get(dep, 0)
            if dep in index:
                mask |= 1 << index[dep]
        ancestors[op] = mask
    found = set()
    for a in heavy:
        for b in heavy:
            if a is not b and not (ancestors[a] >> index[b]) & 1 \
                    and not (ancestors[b] >> index[a]) & 1:
                found.add(a)
                break
    return found


# -- rematerialization: stack readers found by a scan per stack, one insert per op ---------

def rematerialize(graph):
    return each_graph(graph, _rematerialize)


def _rematerialize(graph):
    changed = False
    for loop in list(graph.ops):
        if loop.type == "while" and known_op(loop) and loop.attrs.get("stacks"):
            changed = _loop(graph, loop) or changed
    return changed


def _loop(graph, loop):
    n, body = loop.attrs["n_vars"], loop.attrs["body_graph"]
    stacked = {t: k for k, t in enumerate(body.outputs[n:])}
    loop_vars = set(body.inputs)
    captured = {inner for _, inner in body.captures}
    plans, needed = {}, set()
    for t, k in stacked.items():
        if t in loop_vars:
            continue
        sources = rematerialization._sources(t, loop_vars, captured)
        readers = _stack_readers(graph, loop, k) if sources is not None else None
        if readers:
            plans[k] = readers
            needed |= sources
    missing = [x for x in needed if x not in stacked]
    if not plans or len(missing) >= len(plans):
        return False
    for x in missing:
        stacked[x] = rematerialization._add_stack(loop, x)
    for k, readers in plans.items():
        for backward, gets in readers:
            for get in gets:
                _recompute(loop, backward, get, body.outputs[n + k], stacked)
    graph._changed()
    return True


def _stack_readers(graph, loop, k):
    """[(backward while op, [its stack_get ops of stack k])] when only such ops read
    the collection k of `loop`, else None."""
    n = loop.attrs["n_vars"]
    values, index = loop.outputs[n + 1 + 2 * k], loop.outputs[n + 2 + 2 * k]
    if any(t is values or t is index for t in graph.outputs):
        return None
    found = []
    for op in graph.ops:
        uses = [i for i, t in enumerate(op.inputs) if t is values or t is index]
        if not uses:
            continue
        if op.type != "while" or not known_op(op):
            return None
        gets = rematerialization._gets_in(op, values, index)
        if gets is None:
            return None
        found.append((op, gets))
    return found or None


def _recompute(loop, backward, get, tensor, stacked):
    """Replace `get` (a stack_get in `backward`'s body) by the ops computing the forward
    body's `tensor`, recomputed there from collected loop variables."""
    n, fbody = loop.attrs["n_vars"], loop.attrs["body_graph"]
    body = backward.attrs["body_graph"]
    feeds = {t: backward.inputs[i] for _, pairs in subgraph_feeds(backward)
             for t, i in pairs if i is not None}
    fcaptures = {inner: loop.inputs[n + i] for (_, inner), i in
                 zip(fbody.captures, loop.attrs["body_map"])}
    made = {}

    def insert(opdef, inputs, attrs, like, name, origin):
        op = body.insert_op(body.ops.index(get), opdef, inputs, attrs,
                            [(like.shape, like.dtype)], name, origin)
        return op

    def value(x):
        if x in made:
            return made[x]
        if x.op.type == "const":
            result = insert(registry.get("const"), [], dict(x.op.attrs), x, x.op.name,
                            x.op.origin).outputs[0]
        elif x in fcaptures:
            result = _capture(body, feeds, fcaptures[x])
        elif x in stacked and x is not tensor:
            k = stacked[x]
            pair = [_capture(body, feeds, loop.outputs[n + 1 + 2 * k + j]) for j in (0, 1)]
            dims = None if x.shape.rank is None else tuple(x.shape.dims)
            result = insert(registry.get("stack_get"), pair + [get.inputs[2]],
                            {"shape": dims}, x, "stack_get", get.origin).outputs[0]
        else:
            op = x.op
            inputs = [value(i) for i in op.inputs]
            like = get.outputs[0] if x is tensor else x
            copy = insert(op.opdef, inputs, dict(op.attrs), like, op.name, op.origin)
            copy.original = op.original or op
            result = copy.outputs[0]
        made[x] = result
        return result

    body.replace_op(get, value(tensor).op)
    body.remove_ops([get])
    rebuild_inputs(backward, feeds)
    backward.graph._changed()


def _capture(body, feeds, outer):
    """The placeholder of `body` fed by the outer tensor `outer` (made if new)."""
    for t, source in feeds.items():
        if source is outer and t.op.graph is body:
            return t
    op = body.insert_op(len(body.inputs) + len(body.captures), registry.get("capture"), [], {},
                        [(outer.shape, outer.dtype)], outer.op.name, outer.op.origin)
    inner = op.outputs[0]
    body.captures.append((outer, inner))
    feeds[inner] = outer
    return inner


# -- memory plan: each fused op's inputs compared pairwise ----------------------------------

def plan_memory(graph, owned_inputs=(), escaping=()):
    """memory.plan as it was."""
    for op in graph.ops:
        op.notes = {"async": True} if op.notes and op.notes.get("async") else None
    last = memory._last_uses(graph)
    for t in graph.outputs:
        last[t] = len(graph.ops)                    # outputs live past the end
    store = _OldStorage(graph, owned_inputs, last)
    store._escape(escaping)
    free_after = memory.frees_after(graph, last)
    for i, op in enumerate(graph.ops):
        if free_after.get(op):
            memory._note(op, "free", free_after[op])
        if op.type == "fused":
            donated = [t for t in op.inputs if store.reusable(t, i) and not any(
                x is not t and store.overlap(x, t) for x in op.inputs)]
            if donated:
                memory._note(op, "donate", donated)
            body = op.attrs["body"]
            plan_memory(body, {ph for ph, x in zip(body.inputs, op.inputs)
                        if any(x is d for d in donated)})
            continue
        out = op.outputs[0] if len(op.outputs) == 1 else None
        if out is not None and op.opdef.ufunc is not None and memory._static(out):
            donor = next((t for t in op.inputs if store.reusable(t, i) and memory._static(t)
                          and t.shape == out.shape and t.dtype == out.dtype), None)
            if donor is not None:
                memory._note(op, "reuse", donor)
                store.merge(out, donor)
        appended = ()
        if op.type == "while" and op.notes and op.notes.get("append"):
            # The rows a loop appends stay in its list of rows: never overwritten.
            appended = [item for _, _, item in memory.accumulators(op).values()]
        for sub in op.subgraphs():
            plan_memory(sub, escaping=appended if sub is op.attrs.get("body_graph") else ())
    return graph


class _OldStorage(memory._Storage):
    def overlap(self, a, b):
        return bool(self.roots(a) & self.roots(b))
