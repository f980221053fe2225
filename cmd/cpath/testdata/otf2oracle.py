#!/usr/bin/python3
"""The oracle for cpath's OTF2 import: what an archive's events say its
run time, messages and wait states are, computed with python3-otf2 (the
OTF2 library's own Python reader, which applies the clock offsets)
straight from the events, by cpath's definitions (docs/analysis.md):
a call waits from its start until its last-arriving cause starts, at most
until it ends; the cause of a receive's completion is the matching send
(Late Sender), of a send's completion the receiver's call it was held
until (Late Receiver, the progress rule) or a synchronous send's receive,
of a collective member the last to arrive (Wait at Barrier, Wait at N x N,
MPI_Init a barrier over MPI_COMM_WORLD), or the root (Late Broadcast), of
a rooted reduction's root the last member (Early Reduce).

Usage: otf2oracle.py ANCHOR  -> one JSON object on stdout.
"""
import json
import sys

import otf2

NXN = {"MPI_Allreduce", "MPI_Allgather", "MPI_Allgatherv", "MPI_Alltoall", "MPI_Alltoallv",
       "MPI_Alltoallw", "MPI_Reduce_scatter", "MPI_Reduce_scatter_block"}
BCAST = {"MPI_Bcast", "MPI_Scatter", "MPI_Scatterv"}
REDUCE = {"MPI_Reduce", "MPI_Gather", "MPI_Gatherv"}
BUFFERED = {"MPI_Bsend", "MPI_Rsend", "MPI_Ibsend", "MPI_Irsend"}
SYNC = {"MPI_Ssend", "MPI_Issend"}
# The MPI functions cpath has no operation for: not calls (their time is computation).
NOT_CALLS = {"MPI_Comm_rank", "MPI_Comm_size"}


class Call:
    def __init__(self, rank, idx, op, start):
        self.rank, self.idx, self.op, self.start, self.end = rank, idx, op, start, None
        self.events = []


def main(anchor):
    with otf2.reader.open(anchor) as tr:
        d = tr.definitions
        res, off = d.clock_properties.timer_resolution, d.clock_properties.global_offset

        def ns(t):
            return (t - off) * 10**9 // res

        mpi_locs = next(g for g in d.groups
                        if g.group_type == otf2.GroupType.COMM_LOCATIONS and g.paradigm == otf2.Paradigm.MPI)
        rank_of = {loc: r for r, loc in enumerate(mpi_locs.members)}
        calls = [[] for _ in mpi_locs.members]
        open_call = {}
        for loc, ev in tr.events:
            r = rank_of.get(loc)
            if r is None:
                continue
            name = type(ev).__name__
            if name == "Enter" and ev.region.paradigm == otf2.Paradigm.MPI and ev.region.name not in NOT_CALLS:
                c = Call(r, len(calls[r]), ev.region.name, ns(ev.time))
                open_call[loc] = c
                calls[r].append(c)
            elif name == "Leave" and loc in open_call and ev.region.name == open_call[loc].op:
                open_call.pop(loc).end = ns(ev.time)
            elif loc in open_call:
                open_call[loc].events.append(ev)
    return analyse(calls)


def analyse(calls):
    waits = {}  # (rank, idx) -> (ns, kind)

    def book(c, kind, cause):
        w = min(cause, c.end) - c.start
        if w > 0 and waits.get((c.rank, c.idx), (0, ""))[0] < w:
            waits[(c.rank, c.idx)] = (w, kind)

    sends, recvs = {}, {}  # (comm, src, dst, tag) -> [(post, done, bytes)]
    posted = {}  # (rank, request) -> (post call, kind, event)
    colls = {}   # (comm, k) -> [(call, root)]
    ncoll = {}   # (rank, comm) -> collectives so far
    init = []
    messages, nbytes = 0, 0

    def members(comm):
        return list(comm.group.members)

    for rank_calls in calls:
        for c in rank_calls:
            if c.op in ("MPI_Init", "MPI_Init_thread"):
                init.append(c)
            for ev in c.events:
                name = type(ev).__name__
                if name in ("MpiSend", "MpiIsend"):
                    m = members(ev.communicator)
                    dst = ev.receiver if isinstance(ev.receiver, int) else m.index(ev.receiver)
                    k = (ev.communicator.name, c.rank, dst, ev.msg_tag)
                    messages += 1
                    nbytes += ev.msg_length
                    if name == "MpiSend":
                        sends.setdefault(k, []).append([c, c])
                    else:
                        e = [c, None]
                        sends.setdefault(k, []).append(e)
                        posted[(c.rank, ev.request_id)] = e
                elif name == "MpiRecv":
                    m = members(ev.communicator)
                    src = ev.sender if isinstance(ev.sender, int) else m.index(ev.sender)
                    recvs.setdefault((ev.communicator.name, src, c.rank, ev.msg_tag), []).append([c, c])
                elif name == "MpiIrecvRequest":
                    posted[(c.rank, ev.request_id)] = [c, None]
                elif name == "MpiIrecv":
                    m = members(ev.communicator)
                    src = ev.sender if isinstance(ev.sender, int) else m.index(ev.sender)
                    e = posted.pop((c.rank, ev.request_id))
                    e[1] = c
                    recvs.setdefault((ev.communicator.name, src, c.rank, ev.msg_tag), []).append(e)
                elif name == "MpiIsendComplete":
                    posted.pop((c.rank, ev.request_id))[1] = c
                elif name == "MpiCollectiveEnd":
                    k = (c.rank, ev.communicator.name)
                    ncoll[k] = ncoll.get(k, 0) + 1
                    root = None
                    if ev.root != 2**32 - 1:
                        m = members(ev.communicator)
                        root = ev.root if isinstance(ev.root, int) else m.index(ev.root)
                    colls.setdefault((ev.communicator.name, ncoll[k]), []).append((c, root))

    # Receives are matched in the order they completed; a receiver's calls
    # are in time order.
    for k, ss in sends.items():
        rs = sorted(recvs.get(k, []), key=lambda e: (e[1].idx, e[0].idx))
        for (spost, sdone), (rpost, rdone) in zip(ss, rs):
            book(rdone, "late_sender", spost.start)
            if spost.op in SYNC:
                book(sdone, "late_receiver", rpost.start)
            elif spost.op not in BUFFERED:
                held_by(calls, spost, sdone, rpost, rdone, book)

    if len(init) > 1:
        last = max(c.start for c in init)
        for c in init:
            book(c, "wait_at_barrier", last)
    for inst in colls.values():
        last = max(c.start for c, _ in inst)
        for c, root in inst:
            if c.op == "MPI_Barrier":
                book(c, "wait_at_barrier", last)
            elif c.op in NXN:
                book(c, "wait_at_nxn", last)
            elif c.op in BCAST and root is not None:
                rc = next(x for x, _ in inst if x.rank == root)
                if c.rank != root:
                    book(c, "late_broadcast", rc.start)
            elif c.op in REDUCE and root is not None and c.rank == root:
                book(c, "early_reduce", max(x.start for x, _ in inst if x.rank != root))

    kinds = ["late_sender", "late_receiver", "wait_at_barrier", "wait_at_nxn", "late_broadcast", "early_reduce"]
    out = {"messages": messages, "bytes": nbytes, "ranks": len(calls),
           "calls": sum(len(cs) for cs in calls)}
    all_calls = [c for cs in calls for c in cs]
    out["runtime_ns"] = max(c.end for c in all_calls) - min(c.start for c in all_calls)
    for k in kinds:
        out[k + "_ns"] = sum(w for (w, kind) in waits.values() if kind == k)
    out["by_rank"] = [{k + "_ns": sum(w for (r, _), (w, kind) in waits.items() if r == rank and kind == k)
                       for k in kinds} for rank in range(len(calls))]
    ops = {}
    for c in all_calls:
        ops[c.op] = ops.get(c.op, 0) + 1
    out["ops"] = ops
    return out


def held_by(calls, spost, sdone, rpost, rdone, book):
    """The progress rule: a standard send held until its receiver entered
    MPI (docs/analysis.md, "Sends held until their receiver enters MPI")."""
    send_end = sdone.end
    if send_end <= rpost.start:
        return
    rank_calls = calls[rpost.rank]
    x = None
    for c in rank_calls[rpost.idx:]:
        if c.start >= send_end:
            break
        x = c
    if x is None or x.start < spost.start:
        return
    transfer = max(0, rdone.end - max(spost.start, rdone.start))
    held = x.start - max(spost.start, rpost.start)
    if send_end - x.start > transfer + max(50000, held // 10):
        return
    book(sdone, "late_receiver", x.start)


if __name__ == "__main__":
    json.dump(main(sys.argv[1]), sys.stdout, indent=1, sort_keys=True)
    print()
