// Package placement answers where a gang goes: given a read-only
// topology.State and a Request (pod sets, all or nothing, with optional
// required and preferred levels, slices, exclusivity, GPU models, fractions,
// CPU, memory and an eligible-host bitset), Solver.Place returns a Plan — every
// pod's host and GPUs in rank order, and the Delta that applies it — or a
// Reason saying which constraint failed and what the cluster offers instead.
// It never mutates the State.
//
// # The rule
//
// Capacity of a node (domain or host) for a pod shape is the number of such
// pods it can take: per host the minimum over GPUs (⌊free GPUs / GPUs per
// pod⌋, or Σ ⌊free milli / pod milli⌋ over shareable GPUs), CPU and memory;
// per domain the sum over its hosts, counting only whole slices at and above
// the slice level. Domain capacities come from the State's histograms. They
// are exact when only whole GPUs are in play (no CPU, memory, eligibility,
// exclusivity, fractions or nominations, and no earlier pod set of the gang
// on the hosts); otherwise the aggregates give an upper bound (for fractions:
// whole free GPUs, plus partly used GPUs counted by their free-milli bucket —
// what the bucket's top holds — and at most their free milli in all,
// topology.PartialGPUs), which orders
// and prunes domains, while hosts are checked exactly (and, at the slice
// level, domains are counted host by host) as pods are laid out: a domain
// that holds fewer pods than its bound passes the rest on to the next
// domain by the same rule. "Capacity" below is that exact value or bound.
//
// Eligibility given as a Restriction (Request.Restriction: a closed host set
// with per-domain sums of what its hosts hold free, kept up to date from the
// State's touch log) is not eligibility in the sense above: the aggregates
// are read less the closed hosts' sums, so capacities stay exact and the
// fast paths apply. An engine's spare hosts are such a set: every
// non-preemptible request leaves them out.
//
//   - Required level R: among the domains of level R that fit the gang, the
//     policy's best (BestFit: smallest capacity for the largest pod set, then
//     fewest free GPUs, then lowest index); if the pod sets do not all fit in
//     it, the next one.
//   - Preferred level P: the gang goes into one domain of level P if one fits
//     (chosen by the policy); else into the policy's best domain of level P-1
//     that fits, spread over the fewest domains of level P (largest first, the
//     last chosen by the policy among those that hold the rest); else P-2, and
//     so on up to the required domain. Pods that domains chosen by an upper
//     bound could not hold go to the level's next candidates, then up a
//     level. A preferred level below a pod set's slice level counts as the
//     slice level (spreading below it would split slices).
//   - Inside a domain, level by level: the child that fits all remaining pods,
//     chosen by the policy; if none does, the fewest children, largest
//     capacity first, the last chosen by the policy. Among hosts, BestFit
//     puts fewest free GPUs before smallest capacity: a host whose CPU or
//     memory runs out first would otherwise win while stranding its GPUs
//     (on the openb trace under the FGD protocol, capacity first allocates
//     91.0% of GPUs at 100% arrived, free GPUs first 93.5%). Chosen children are
//     filled in index order, so consecutive ranks land on neighbouring hosts.
//   - Inside a host: whole-GPU pods take the lowest GPUs of the smallest run
//     of free GPUs that holds them (keeping the largest free blocks);
//     fractional pods take the GPU with the least free milli that fits.
//   - Pod sets are placed scarcest first (more whole GPUs per pod, then
//     larger fractions, then more CPU and memory), each seeing what the
//     previous ones took; if that fails, in input order. Ranks always follow
//     input order. A gang of several sets that still fails, of at most 16
//     pods in a domain of at most 1,024 hosts of which at most 16 may take
//     one of its pods (a small cluster, or a busy one), is searched
//     exhaustively over those hosts' pod counts (GPUs inside a host still
//     chosen by the rule below), so small gangs are placed whenever the
//     counts allow; a gang whose every
//     set is fractional that still fails is searched again with each host's
//     fractions packed into its GPUs by an exact search (sets of different
//     sizes can need GPUs shared between them where the rule strands milli).
//   - A gang of several sets required on one host is tried only on hosts
//     that may hold it all: its whole GPUs, CPU and memory together, and a
//     bin-packing bound on its fractions (pods of more than half a GPU never
//     share one; Martello and Toth's L2 bound for GPUs of unequal free milli).
//     A gang no host would hold with every GPU free is refused at once
//     (GangHostTooSmall: it never fits); domains and hosts with fewer free
//     GPUs than it needs at least are skipped from their free counts
//     (GangHost when that leaves none). Only hosts where every search fails
//     are skipped: no placement changes. Under BestFit hosts are scanned in
//     passes by free GPUs, fewest first (BestFit's first key): a pass stops
//     at a host with the least room for the primary set that a host holding
//     the gang can have, and skips domains whose histograms and partly used
//     GPUs show no host of the pass could hold it; FirstFit stops at the
//     first host that may. Where the host tried does not hold the gang, the
//     scan goes on. A gang of several sets required in
//     a domain is tried only in domains whose free GPUs and milli hold it.
//   - A pod that no host of an acceptable model could hold however free —
//     its GPUs, CPU and memory together (each model's host sizes are listed
//     once per tree) — is refused before any search: HostTooSmall,
//     HostCPUTooSmall or HostMemoryTooSmall (Set -1 for a gang's sets
//     together on one host). ReasonCode.Permanent tells these apart.
//
// Whatever the search, the choice at each step is deterministic: the same
// State and Request give the same Plan. One-pod requests at a root with more
// than 64 children read the best child from an index the Solver keeps up to
// date from the State's touch log (one index per pod shape, all reading one
// decoding of the log), so their cost does not grow with the number of
// blocks. A one-pod request placed anywhere (no level required or preferred
// below the root) takes the descent straight — the best child at every
// level, then the host's GPUs — without the set-up gangs need; whenever a
// level's choice cannot hold the pod (an upper bound overstated it), the
// general path decides, so the answer is the same. Under BestFit with the
// aggregates' keys, the Solver keeps each pod shape's last descent and the
// touch count then: the next request of that shape reads the hosts touched
// since, and descends again only from the first level where a node on the
// path got worse or a touched sibling beats it (the same answer).
//
// # With a workload profile
//
// Solver.SetProfile gives the Solver the workload's typical pod shapes with
// weights (a Profile). Then a one-pod request (one set, default policy, no
// slices, not exclusive, no nominated or released GPUs) chooses among hosts
// by capacity loss instead of fewest free GPUs: the host where the pod
// destroys the least weighted capacity for the typical shapes, Σ_m W(m)·
// (pods of m the host holds before − after), W(m) ∝ weight × GPU request ÷
// (the empty tree's capacity for m)^¼; ties to the least free CPU + 16 × free
// milli-GPU, then the lowest index; a fraction takes the GPU of least loss
// (see Profile). Domains above the hosts are still chosen by BestFit; without
// a profile nothing changes. The Solver caches per host what the rule needs,
// rereads only hosts whose generation changed, visits only hosts whose GPUs
// may hold the pod, and memoises losses by host state and pod shape (a loss
// depends on nothing else), so a state is scored once per shape.
//
// Failed and draining hosts take no pods; GPUs nominated for another job are
// used only when the topology package's nomination rule admits the gang.
package placement
