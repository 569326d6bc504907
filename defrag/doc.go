// Package defrag measures topology fragmentation and plans bounded moves of
// running jobs (checkpoint-and-restart migrations) that undo it, over a
// read-only topology.State, using package placement. It never kills a job
// and never mutates the State: plans are values — ordered moves, each a job
// and all of its new pods — that the embedder applies (Plan.Delta, one
// topology.MoveJob per move, in order) or drops.
//
// # Metrics
//
// Meter.Measure reports, per level (the root, every named level, hosts):
// the free GPUs, the entirely free domains and the free GPUs inside them,
// the topology fragmentation ratio — the share of free GPUs outside entirely
// free domains — and the largest gang of a given pod shape placeable with
// the level required (the most pods one domain of the level takes); and the
// stranded milli-GPU on partly used GPUs. These are topology fragmentation
// figures, not the workload-aware fragmentation of the FGD paper (`blink fgd`
// reports that one). They are read from the State's aggregates: free-domain
// bitsets (popcounts), idle-host counts, the root's histograms; the largest
// gang per level is cached per child of the root and brought up to date from
// the State's touch log, so a measure costs O(levels × children of the root)
// plus the domains under the children touched since the last measure.
//
// # The move model
//
// A move re-places one whole job — of any priority — that is preemptible and
// movable (topology.Job), whose pods all run on one GPU model: it releases
// its pods and takes new ones (overlap allowed, as topology.MoveJob does),
// on healthy hosts of that model (failed and draining hosts take nothing),
// keeping the job's own constraints: its required and preferred levels,
// its pod sets with their slices, exclusivity, and pod i's shape (GPUs,
// milli, CPU, memory). A job recorded without pod sets is re-placed as one
// set per run of consecutive pods of one shape. A move never takes GPUs
// nominated for another job. Each job moves at most once per plan, and the
// moves are ordered so that each is valid in the State the previous ones
// leave.
//
// # MakeRoom: the fewest moves for a pending request
//
// Planner.MakeRoom(s, r, cfg, plan) returns a plan after which request r
// fits — with no move if it fits as it is — using the fewest moves, then the
// fewest GPUs moved (the GPUs the moved jobs hold), at most cfg.MaxMoves; or
// no fit and no moves, with a Reason. The request goes into one target
// domain: a domain of its required level, or, without one, of the deepest
// level whose domains are large enough (a host for one pod). Moved jobs land
// outside the target. The search:
//
//  1. Targets are ranked by the GPUs they miss (request GPUs − free GPUs −
//     GPUs nominated for jobs the request may displace), a lower bound on
//     the GPUs any plan for them moves; the MaxDomains best are kept,
//     visiting the children of the root best first by an index of their
//     most free domain (kept from the touch log) and skipping those that
//     cannot beat the targets held. A target missing more GPUs, or more of
//     the request's largest pods, than the K largest movable jobs anywhere
//     hold (State.MovableGPUsBound) is left out before any of its pods is
//     read. For a request with a required
//     level, if even the best target misses GPUs the request cannot fit as it
//     is and the plain placement (Solver.Place) is skipped; otherwise it is
//     tried first.
//  2. For each target: the movable jobs with pods in it (candidates, at most
//     MaxCandidates, those freeing most there first). If the request does not
//     fit with all of them gone (Solver.PlaceWithout), the target is out.
//  3. Iterative deepening on the number of moves m = 1, 2, … ≤ K: the
//     m-subsets of candidates whose GPUs in the target cover what it misses
//     (pruned by prefix sums, candidates sorted by GPUs freed) and that pass
//     a host-by-host count of the request's largest pods, cheapest first;
//     PlaceWithout tells whether the request fits with the subset gone; if
//     so, the subset is moved out in every order (depth first), with up to
//     m − |subset| helper moves of other movable jobs (nearest first, at
//     most MaxHelpers) that make room for it, the cheapest helpers kept. The
//     first m with a plan is the fewest moves for the target; the cheapest
//     plan at that m wins, pruned by the best so far.
//  4. A move's destination is found by PlaceWithout on the State as it is,
//     as if the jobs moved so far and the job itself were gone, with the
//     target's hosts closed (an eligible-host bitset). The solver does not
//     see where earlier moves landed, so the planner keeps those hosts itself
//     and re-fits the move's pods there (same hosts, GPUs still free); a host
//     that cannot take them is closed and the solver asked again. When the
//     cluster has at most 16 hosts outside the target and the solver's
//     destination leads nowhere, every destination is enumerated (pods
//     assigned to hosts as multisets, keeping required levels and slices),
//     with the search states memoised.
//  5. Targets are visited fewest missing GPUs first; the search stops when a
//     one-move plan moves no more GPUs than the next target misses.
//
// Guarantee: in this model, with Result.Exact true, the plan has the fewest
// moves and, among plans of that many moves, the fewest GPUs moved; and no
// fit means no plan of at most K moves exists. Exact is false when a limit of the Config (targets,
// candidates, helpers, work) or a destination not enumerated on a large
// cluster may have hidden a better plan; the plan is valid either way. An
// oracle test checks MakeRoom against a breadth-first search over States
// (every placement of every move, memoised) on small clusters with up to 5
// movable jobs and K ≤ 3. On large clusters a plan of one move has the
// fewest moves by definition, and its GPUs moved are proven the fewest once
// the next target misses at least as many GPUs (the usual case: the search
// then stops after a few targets).
//
// Cost: a scan of the best children of the root, then per target examined
// a few placements; one move for a rack job on 1M GPUs is a few F (see
// bench). A search that needs many moves grows with the subsets tried,
// bounded by MaxWork.
//
// # Compact: freeing domains, growing the largest gang
//
// Planner.Compact(s, goal, cfg, plan) works on a clone of the State and
// plans at most cfg.MaxMoves moves (and cfg.MaxGPUsMoved GPUs):
//
//   - FreeDomains: more entirely free domains of a level (e.g. empty racks).
//     The candidates are the domains every job of which may move (no failed
//     or draining host, no nominated GPU), ordered by moves, then GPUs to
//     move (GPUs first when MaxGPUsMoved bounds the plan). The domains chosen
//     and those free already are closed to moves; each chosen domain is
//     emptied job by job (largest first) by the solver's best fit into the
//     rest, or given back with its moves undone if a job finds no home.
//     When every movable job has its pods in one domain, domains are
//     independent and this order frees the most domains the moves allow.
//   - LargestGang: the most pods of a shape one domain of a level takes.
//     Among the MaxDomains domains with the most free GPUs, those with the
//     largest potential (every movable job gone) are simulated: their hosts
//     cleared fewest moves first until the budget or the goal is reached;
//     the best simulation is kept.
//
// Compaction is greedy: valid move by move, not proven best. If the goal's
// Want is not reached within the budget, Outcome.Reached is false and the
// plan is the best found.
package defrag
