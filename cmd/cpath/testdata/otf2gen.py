#!/usr/bin/python3
"""Writes small OTF2 archives with python3-otf2, as a tool other than
cpath would (no cpath attributes): the import's standard path.

Usage: otf2gen.py KIND DIR

  halo     3 MPI ranks: rounds of Irecv/Isend/computation/Waitall, then
           Allreduce, Bcast (root 1) and Barrier on MPI_COMM_WORLD, a rank
           late in each round by design; the communicator of each Irecv
           comes only with its completion (MpiIrecv), as OTF2 has it
  nompi    one process computing: no MPI at all
  nocalls  MPI's definitions (ranks, MPI_COMM_WORLD), but no MPI call
"""
import sys

import otf2
from otf2.enums import GroupType, Paradigm, CollectiveOp, RegionRole

US = 1000  # the timer counts ns


def archive(path, nranks, mpi=True):
    w = otf2.writer.Writer(path, timer_resolution=10**9)
    d = w.definitions
    node = d.system_tree_node("node0")
    writers, locs = [], []
    for r in range(nranks):
        lg = d.location_group("MPI Rank %d" % r if mpi else "Process", system_tree_parent=node)
        locs.append(d.location("Master thread", group=lg))
        writers.append(w.event_writer_from_location(locs[-1]))
    comm = None
    if mpi:
        g = d.group("", group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.MPI, members=locs)
        wg = d.group("", group_type=GroupType.COMM_GROUP, paradigm=Paradigm.MPI, members=locs)
        comm = d.comm("MPI_COMM_WORLD", group=wg)
    return w, d, writers, comm


def mpi_region(d, name):
    return d.region(name, paradigm=Paradigm.MPI, region_role=RegionRole.FUNCTION)


def halo(path):
    n = 3
    w, d, ew, world = archive(path, n)
    main = d.region("main", paradigm=Paradigm.USER)
    work = d.region("work", paradigm=Paradigm.USER)
    R = {name: mpi_region(d, name) for name in
         ["MPI_Init", "MPI_Irecv", "MPI_Isend", "MPI_Waitall", "MPI_Allreduce", "MPI_Bcast", "MPI_Barrier",
          "MPI_Finalize", "MPI_Comm_rank"]}
    t = [10 * US * r for r in range(n)]  # ranks launched apart

    def call(r, name, dur, inside=()):
        s = t[r]
        ew[r].enter(s, R[name])
        for f in inside:
            f(s, s + dur)
        ew[r].leave(s + dur, R[name])
        t[r] = s + dur

    def compute(r, dur):
        ew[r].enter(t[r], work)
        t[r] += dur
        ew[r].leave(t[r], work)

    for r in range(n):
        ew[r].enter(t[r], main)
    # MPI_Init ends together: the last rank's launch bounds it.
    for r in range(n):
        call(r, "MPI_Init", 50 * US + 10 * US * (n - 1 - r))
        call(r, "MPI_Comm_rank", 1 * US)
    req = [0] * n
    for it in range(4):
        late = it % n  # the rank late this round
        posts = []
        for r in range(n):
            compute(r, (300 if r == late else 20) * US)
            left, right = (r - 1) % n, (r + 1) % n
            rq, sq = req[r], req[r] + 1
            req[r] += 2
            call(r, "MPI_Irecv", 2 * US, [lambda s, e, rq=rq, r=r: ew[r].mpi_irecv_request(s, rq)])
            call(r, "MPI_Isend", 3 * US, [lambda s, e, sq=sq, r=r, right=right:
                                          ew[r].mpi_isend(s + US, right, world, 7, 4096, sq)])
            posts.append((r, left, rq, sq, t[r]))
        # The Waitall ends once the left neighbour's send has started, and
        # after the rank's own send got its receive.
        sends = {r: p[4] - 3 * US for r, p in zip(range(n), posts)}
        for r, left, rq, sq, _ in posts:
            compute(r, 10 * US)
            start = t[r]
            end = max(start, sends[left] + 40 * US, sends[(r + 1) % n] + 40 * US) + 5 * US
            ew[r].enter(start, R["MPI_Waitall"])
            ew[r].mpi_isend_complete(end, sq)
            ew[r].mpi_irecv(end, left, world, 7, 4096, rq)
            ew[r].leave(end, R["MPI_Waitall"])
            t[r] = end
        for name, root in (("MPI_Allreduce", None), ("MPI_Bcast", 1), ("MPI_Barrier", None)):
            for r in range(n):
                compute(r, (5 + 7 * r) * US)
            starts = list(t)
            last = max(starts)
            for r in range(n):
                end = (starts[root] if root is not None and r != root else last) + 8 * US + r * US
                end = max(end, starts[r] + US)
                op = {"MPI_Allreduce": CollectiveOp.ALLREDUCE, "MPI_Bcast": CollectiveOp.BCAST,
                      "MPI_Barrier": CollectiveOp.BARRIER}[name]
                ew[r].enter(starts[r], R[name])
                ew[r].mpi_collective_begin(starts[r])
                ew[r].mpi_collective_end(end, op, world, root if root is not None else 0xFFFFFFFF,
                                         8 if name != "MPI_Barrier" else 0, 8 if name != "MPI_Barrier" else 0)
                ew[r].leave(end, R[name])
                t[r] = end
    for r in range(n):
        call(r, "MPI_Finalize", 20 * US)
        ew[r].leave(t[r], main)
    w.close()


def nompi(path):
    w, d, ew, _ = archive(path, 1, mpi=False)
    main, foo = d.region("main"), d.region("foo")
    ew[0].enter(0, main)
    ew[0].enter(10, foo)
    ew[0].leave(20, foo)
    ew[0].leave(30, main)
    w.close()


def nocalls(path):
    w, d, ew, _ = archive(path, 2)
    main = d.region("main")
    for r, e in enumerate(ew):
        e.enter(r, main)
        e.leave(100 + r, main)
    w.close()


if __name__ == "__main__":
    {"halo": halo, "nompi": nompi, "nocalls": nocalls}[sys.argv[1]](sys.argv[2])
