// Package preempt answers whom to evict so that a request fits: given a
// read-only topology.State and a placement.Request, Planner.Plan returns the
// cheapest irreducible set of running jobs to evict (the victims), the
// placement the request gets once they are gone (a placement.Plan), and a
// nomination of exactly those GPUs, so that what the victims free while they
// terminate goes to the request and not to the next small job — or a Reason
// naming what blocks it. It never mutates the State; the caller evicts,
// applies Result.Delta() (the nomination) and, once the victims are gone,
// Result.Plan.Delta().
//
// # The rules
//
// Victims are whole jobs (a gang dies whole), preemptible and of priority
// strictly below the request's; jobs that are not preemptible, or of equal
// or higher priority, never are. Placement decides where the request may go
// (failed and draining hosts take nothing; GPUs nominated for a job of equal
// or higher priority are off limits unless the request ends before their
// ready time); a victim frees capacity only where its pods are, and frees a
// host it holds exclusively. If the request fits as the cluster is, the
// answer is placement's, with no victims.
//
// Cost, compared lexicographically: the highest victim priority, then the
// number of victims, then the milli-GPUs they hold (all their pods, also
// outside the domain the request goes to). Among equal costs the answer is
// the first in the search order below (domains and hosts in index order,
// subsets by milli then job id; the top-down answer's largest jobs first,
// then least milli, then job id): deterministic, the same State and Request
// give the same Result. Every answer is irreducible — without any one victim
// the request fits nowhere — which is checked explicitly before it is
// returned.
//
// # Scopes
//
// Where the request's pods must go decides the scopes searched: one host for
// a one-pod request or one whose required level is the host (its victims
// are the jobs on that host); one domain of the required level; or, for a
// gang with no required level, the whole cluster. Only jobs with pods in a
// scope can help there, so the optimum is the best over scopes of each
// scope's optimum.
//
// # The search
//
// Best-first over the domain tree (search.go): each domain's key is a lower
// bound on the cost of any answer inside it, from aggregates alone (bound.go):
// the priority below which the State's preemptible GPUs (PreemptibleBelow,
// grouped by powers of two) plus the free ones cannot cover the request,
// one victim, and the milli-GPUs a victim set must hold to free what is
// missing. For a gang of one pod set of g whole GPUs required inside a
// domain, the leaves' keys are raised by a bound counted in pods (slots.go):
// the pods a domain lacks (the request's less what its free GPUs take, from
// the State's histograms) against the most pods each candidate can make
// room for (⌈max host GPUs / g⌉ per pod it has), which bounds the number of
// victims and, through the candidates able to be among so few, their
// milli-GPUs. It reads a summary of the candidates (the largest, from the
// compact job view) made once the leaves searched are large beside the job
// view; leaves pushed before are re-keyed as they are popped. On a full
// cluster where no job can empty enough hosts alone, every domain's bound
// then says two victims, and the search stops at the first domain whose
// answer has two. A leaf popped for the first time is bound once more from
// the pods on its own hosts (credit.go): each candidate is credited, host
// by host, with the share of the GPUs still to free that it holds, so that
// a block whose jobs share their hosts is bound by how many it really
// takes, priority by priority. Where that bound is one victim and one job
// alone meets it (its cost is the bound, and placement confirms the
// request fits with it gone), that job is the leaf's answer, with no model.
//
// A gang that may go anywhere (no required level: one scope, the cluster) of
// whole GPUs and nothing else, that may take no nominated GPU, is first
// answered top-down (topdown.go), from aggregates and the victims' pods
// alone: the preemptible jobs of the least priority the bound allows,
// largest first, are evicted until the request fits, and those it does not
// need taken back out. The answer is taken
// when it meets the lower bound — that priority, the fewest victims whose
// sizes (State.PreemptibleCover) can free the GPUs missing, the aggregate
// milli bound — which also proves it irreducible (checked besides, victim
// by victim); otherwise the model's search below decides. On a full
// cluster of a million GPUs, where large jobs tile whole hosts, it reads a
// quarter of the candidates' pods the model reads.
//
// A scope popped from the heap is searched (scope.go): the least priority
// threshold that makes it fit, the candidates every answer needs
// (without them even all others do not fit), then every subset of the rest
// in cost order when at most Config.ExactVictims of them remain, else a
// greedy descent to an irreducible set with a lower bound (greedy.go: drops
// by the model first, placement asked once; else in runs of candidates,
// doubled while they go, halved when they cannot). The search stops
// when the best answer costs no more than the least bound left (the answer
// is then proven optimal: Result.Exact), or when a budget (Config) runs out
// after a first answer; Result.Bound is then what the search proved.
//
// Feasibility inside a scope comes from a capacity model (model.go) that
// computes, per host, what placement computes (free and released GPUs,
// fractions, CPU, memory, health, models, eligibility, exclusivity,
// nominations) with a set of candidates gone, updated in O(a candidate's
// pods) when one is added or removed. For a request of one pod set without
// slices, placement is exact, and so is the model: the search then calls
// placement once, for the answer's plan. Otherwise the model is a necessary
// condition (it proves infeasibility) and placement (Solver.PlaceWithout, as
// if the candidate set were gone) decides the rest. Where the model is exact
// and whole GPUs are asked for, hosts no candidate can change (a pod that
// stays blocks them) join the model's constant rest with their candidate
// pods unmodelled, and racks where no candidate holds a GPU are read from
// the State's histograms without visiting their pods (modelhost.go); a
// model of the whole cluster is then built job first, from the candidates'
// pods rather than every host's (modeljobs.go). On a full cluster the
// searches see a fraction of the candidates. The
// greedy's bound counts, besides the victims needed, the milli-GPUs that
// freeing the missing GPUs costs at least (milli.go), which on a full
// cluster often proves the greedy's answer optimal.
//
// # Guarantees
//
//   - Valid: the plan applies once the victims are removed, and the
//     nomination applies to the State as it is.
//   - Irreducible: always, checked explicitly.
//   - Optimal when Result.Exact: on every instance of the tests' exhaustive
//     oracle (clusters with up to 14 candidate victims, subsets tried in cost
//     order against placement on a clone), the cost equals the optimum.
//   - Deterministic and allocation-free once warmed up (tests check both).
//
// Feasibility is assumed to grow with the victim set (placement is exact,
// hence monotone, for one pod set; for gangs of several sets its heuristics
// almost always are): the threshold and the forced candidates rely on it.
package preempt
