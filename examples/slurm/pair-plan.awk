# pair-plan.awk: which node pairs a two-node gdrcheck sweep tests, in which
# round (pair-sweep.sh runs it; on its own: awk -f pair-plan.awk NODES).
#
# Input, one node a line, in the order pair-sweep.sh was given them:
#   NODE SWITCH      (SWITCH: the leaf switch the node hangs off; "-" when
#                     the operator named none)
# Output, one pair a line:
#   ROUND NODE_A NODE_B HOP
# HOP is the switch the pair's traffic stays under ("leaf1") or the
# switch-to-switch hop it crosses ("leaf1~leaf2").
#
# The pairs:
#  1. a ring under each switch: its nodes in input order, each with the
#     next, the last with the first (two nodes: one pair; one node: none).
#     Every node of a switch with two or more nodes is tested against two
#     different partners, so a bad node (it fails both its pairs) is told
#     apart from a bad link or a bad partner (one pair fails).
#  2. one pair across every two switches (S, T), S before T in input
#     order: the node of S with the fewest pairs so far (the first such)
#     with the same of T. Every switch-to-switch hop the operator named is
#     crossed once, and a switch of one node is still tested.
# With no switch named (every SWITCH "-"), step 1 is one ring over all
# nodes. One node in all: nothing to pair (exit 1).
#
# Rounds: pairs are placed in order, each into the first round in which
# neither of its nodes is busy (and that holds fewer than maxpar pairs,
# when -v maxpar=N > 0 is given). A round's pairs share no node and run at
# the same time; at most 2 x (most pairs of one node) - 1 rounds.
{
	if (NF < 1 || $1 ~ /^#/) next
	if ($1 in sw) next			# a node named twice: the first wins
	n++
	node[n] = $1
	s = (NF >= 2 ? $2 : "-")
	sw[$1] = s
	if (!(s in size)) order[++ns] = s
	member[s, size[s]++] = $1
}

function add(a, b, hop) {
	np++
	pa[np] = a; pb[np] = b; ph[np] = hop
	deg[a]++; deg[b]++
}

# The member of switch s with the fewest pairs (the first such).
function least(s,   i, best) {
	best = member[s, 0]
	for (i = 1; i < size[s]; i++)
		if (deg[member[s, i]] < deg[best]) best = member[s, i]
	return best
}

END {
	if (n < 2) {
		print "pair-plan: " n " node(s): a pair needs two" > "/dev/stderr"
		exit 1
	}
	for (i = 1; i <= ns; i++) {
		s = order[i]
		k = size[s]
		if (k == 2) add(member[s, 0], member[s, 1], s)
		else if (k >= 3)
			for (j = 0; j < k; j++) add(member[s, j], member[s, (j + 1) % k], s)
	}
	for (i = 1; i <= ns; i++)
		for (j = i + 1; j <= ns; j++)
			add(least(order[i]), least(order[j]), order[i] "~" order[j])
	maxpar += 0
	for (p = 1; p <= np; p++) {
		for (r = 1; ; r++)
			if (!((r, pa[p]) in busy) && !((r, pb[p]) in busy) &&
			    (maxpar <= 0 || inround[r] < maxpar))
				break
		busy[r, pa[p]] = 1; busy[r, pb[p]] = 1
		inround[r]++
		round[p] = r
		if (r > nr) nr = r
	}
	for (r = 1; r <= nr; r++)
		for (p = 1; p <= np; p++)
			if (round[p] == r) print r, pa[p], pb[p], ph[p]
}
