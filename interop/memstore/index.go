package memstore

import (
	"github.com/google/btree"

	"github.com/wopinterop/wopinterop/interop"
)

// The ListRuns index of a tenant. ListRuns filters by workspace (from the
// Subject), contextId, workflowId and a set of statuses; every combination
// of the first three is a partition, and a partition keeps one B-tree per
// status in ListRuns order. A run is in the partitions of every subset of
// its non-empty (workspace, contextId, workflowId): at most eight, each
// under its current status. So a query names exactly one partition, its
// page is a merge of at most ten trees from the cursor on, stopping once
// the page is full, and its total is the sum of their lengths: O(page +
// log n) whatever the tenant's size, and inserting a run is O(log n).
// Only statusAfter is not kept as a count: its total counts the runs at or
// after the bound one by one, which is O(matches), never O(tenant).
// A run alone in its contextId — every send that starts a conversation
// mints one — is kept only in that contextId's partition: the narrower
// partitions of the context (with a workspace or workflowId) could hold
// nothing else, so they are made when a second run joins the context.

// btreeDegree is the B-tree degree: nodes of up to 63 entries.
const btreeDegree = 32

// listKey is a position in ListRuns order.
type listKey struct {
	at int64 // StatusAt in Unix nanoseconds
	id string
}

// before reports whether a is listed before b: newest status timestamp
// first, run id descending on ties.
func (a listKey) before(b listKey) bool {
	if a.at != b.at {
		return a.at > b.at
	}
	return a.id > b.id
}

// listEntry is a run's position in the index. Every tree the run is in
// holds this one entry, so a status change re-keys it once.
type listEntry struct {
	key listKey
	rec *runRecord
}

// entryOlder orders a tree oldest first, the reverse of ListRuns order: a
// run entering a status is usually the newest in it, so it is appended at
// a leaf's end and leaves it from there, instead of shifting the leaf's
// entries. Pages are read descending.
func entryOlder(a, b *listEntry) bool { return b.key.before(a.key) }

// partitionKey names the runs of one combination of filter values; an
// empty field matches any value.
type partitionKey struct{ workspace, contextID, workflowID string }

// narrowsContext reports whether k is a context's partition narrowed by
// workspace or workflowId, which a run alone in its context is not kept in.
func (k partitionKey) narrowsContext() bool {
	return k.contextID != "" && (k.workspace != "" || k.workflowID != "")
}

// isContext reports whether k is a context's partition, unnarrowed.
func (k partitionKey) isContext() bool {
	return k.contextID != "" && k.workspace == "" && k.workflowID == ""
}

// partition holds the runs of one partitionKey, one tree per status
// (indexed as in statusIndex); a status without runs has no tree. A
// partition that only ever held one run — every contextId the server
// mints has one, so most partitions are such — keeps it as lone instead,
// with no trees: it costs nothing but its map entry (partitions are map
// values, not pointers, for that), and its status changes cost nothing.
type partition struct {
	lone  *listEntry
	trees *statusTrees // nil while lone is set
}

type statusTrees [numStatuses]*btree.BTreeG[*listEntry]

func (ts *statusTrees) empty() bool {
	for _, tree := range ts {
		if tree != nil {
			return false
		}
	}
	return true
}

// file puts e in its status tree of ts.
func (x *runIndex) file(ts *statusTrees, e *listEntry) {
	st := statusIndex(e.rec.run.Status)
	tree := ts[st]
	if tree == nil {
		if n := len(x.spare); n > 0 {
			tree, x.spare = x.spare[n-1], x.spare[:n-1]
		} else {
			tree = btree.NewWithFreeListG(btreeDegree, entryOlder, x.free)
		}
		ts[st] = tree
	}
	tree.ReplaceOrInsert(e)
}

// promote turns p's lone run into the first run of its trees, as a second
// run joins the partition.
func (x *runIndex) promote(p *partition) {
	p.trees = new(statusTrees)
	x.file(p.trees, p.lone)
	p.lone = nil
}

// maxSpareTrees bounds the empty trees a tenant keeps for reuse: enough
// for a run's partitions, each of which may empty a status as it moves.
const maxSpareTrees = 8

// drop lets go of an emptied tree, keeping it for reuse when there is
// room: a run that empties a status (the only running run finishing)
// leaves a tree the next run in that status takes again.
func (x *runIndex) drop(tree *btree.BTreeG[*listEntry]) {
	if len(x.spare) < maxSpareTrees {
		x.spare = append(x.spare, tree)
	}
}

// runIndex is a tenant's ListRuns index; tenant.mu guards it.
type runIndex struct {
	free  *btree.FreeListG[*listEntry] // node reuse across the tenant's trees
	parts map[partitionKey]partition
	spare []*btree.BTreeG[*listEntry] // emptied trees, for file to reuse
}

func newRunIndex() runIndex {
	return runIndex{
		free:  btree.NewFreeListG[*listEntry](btree.DefaultFreeListSize),
		parts: make(map[partitionKey]partition),
	}
}

// partitionKeys are the partitions run belongs to: every subset of its
// non-empty workspace, contextId and workflowId, the context's own
// partition before those narrowing it.
func partitionKeys(run *interop.Run) (keys [8]partitionKey, n int) {
	for subset := range 8 {
		var k partitionKey
		if subset&1 != 0 {
			if run.Workspace == "" {
				continue
			}
			k.workspace = run.Workspace
		}
		if subset&2 != 0 {
			if run.ContextID == "" {
				continue
			}
			k.contextID = run.ContextID
		}
		if subset&4 != 0 {
			if run.WorkflowID == "" {
				continue
			}
			k.workflowID = run.WorkflowID
		}
		keys[n] = k
		n++
	}
	return keys, n
}

// insert adds e under its run's current status and key.
func (x *runIndex) insert(e *listEntry) {
	keys, n := partitionKeys(&e.rec.run)
	solo := false // e is alone in its context
	for _, k := range keys[:n] {
		if solo && k.narrowsContext() {
			continue
		}
		p, ok := x.parts[k]
		switch {
		case !ok:
			x.parts[k] = partition{lone: e}
			solo = solo || k.isContext()
			continue
		case p.lone == e:
			solo = solo || k.isContext()
			continue
		case p.lone != nil:
			// A second run: from now on the partition keeps trees, and
			// a context's first run enters its narrower partitions.
			if k.isContext() {
				x.narrow(p.lone)
			}
			x.promote(&p)
			x.parts[k] = p
		}
		x.file(p.trees, e)
	}
}

// narrow files e, so far alone in its context, in the context's narrower
// partitions, which hold no other run.
func (x *runIndex) narrow(e *listEntry) {
	keys, n := partitionKeys(&e.rec.run)
	for _, k := range keys[:n] {
		if k.narrowsContext() {
			x.parts[k] = partition{lone: e}
		}
	}
}

// soloInContext reports whether e is alone in its context, and so kept in
// none of the context's narrower partitions.
func (x *runIndex) soloInContext(e *listEntry) bool {
	if e.rec.run.ContextID == "" {
		return false
	}
	return x.parts[partitionKey{contextID: e.rec.run.ContextID}].lone == e
}

// remove takes e out under its run's current status and key, dropping
// trees and partitions that become empty so that their memory goes with
// their last run.
func (x *runIndex) remove(e *listEntry) {
	st := statusIndex(e.rec.run.Status)
	keys, n := partitionKeys(&e.rec.run)
	solo := x.soloInContext(e)
	for _, k := range keys[:n] {
		if solo && k.narrowsContext() {
			continue
		}
		p, ok := x.parts[k]
		if ok && p.lone == e {
			delete(x.parts, k)
			continue
		}
		if !ok || p.trees == nil || p.trees[st] == nil {
			continue
		}
		tree := p.trees[st]
		tree.Delete(e)
		if tree.Len() == 0 {
			p.trees[st] = nil
			x.drop(tree)
			if p.trees.empty() {
				delete(x.parts, k)
			}
		}
	}
}

// move re-files e under status st and key at, in the same partitions: a
// status change moves a run between trees but never between partitions.
// A tree its last run leaves is handed to the new status when that has
// none, so a run alone in its partitions (a fresh contextId) changes
// status without allocating.
//
// Each partition is looked up once: e leaves the trees under its old key,
// then is filed under the new one.
func (x *runIndex) move(e *listEntry, st interop.RunStatus, at int64) {
	from, to := statusIndex(e.rec.run.Status), statusIndex(st)
	keys, n := partitionKeys(&e.rec.run)
	solo := x.soloInContext(e)
	var (
		parts   [len(keys)]partition
		present [len(keys)]bool
	)
	for i, k := range keys[:n] {
		if solo && k.narrowsContext() {
			continue // kept in no such partition
		}
		p, ok := x.parts[k]
		parts[i], present[i] = p, ok
		if !ok || p.lone != nil {
			continue // a lone run needs no move
		}
		if tree := p.trees[from]; tree != nil {
			tree.Delete(e)
			if tree.Len() == 0 {
				p.trees[from] = nil
				if p.trees[to] == nil {
					p.trees[to] = tree
				} else {
					x.drop(tree)
				}
			}
		}
	}
	e.rec.run.Status, e.key.at = st, at
	for i := range keys[:n] {
		p := &parts[i]
		switch {
		case !present[i] && solo && keys[i].narrowsContext():
			continue
		case !present[i]:
			x.parts[keys[i]] = partition{lone: e}
			continue
		case p.lone == e:
			continue
		case p.lone != nil:
			x.promote(p)
			x.parts[keys[i]] = *p
		}
		x.file(p.trees, e)
	}
}

// pageBuffers hold a page being merged: the page so far and the next one.
type pageBuffers [2][MaxPageSize + 1]*listEntry

// page returns the first limit runs of f listed strictly after start (from
// the top when start is nil), and the total number of runs f matches
// across all pages. buf holds the result.
func (x *runIndex) page(f *listFilter, start *listKey, limit int, buf *pageBuffers) (page []*listEntry, total int) {
	key := partitionKey{workspace: f.workspace, contextID: f.contextID, workflowID: f.workflowID}
	p, ok := x.parts[key]
	if !ok && key.narrowsContext() {
		// A run alone in its context is kept only in the context's partition.
		if c := x.parts[partitionKey{contextID: f.contextID}]; c.lone != nil &&
			(f.workspace == "" || c.lone.rec.run.Workspace == f.workspace) &&
			(f.workflowID == "" || c.lone.rec.run.WorkflowID == f.workflowID) {
			p, ok = c, true
		}
	}
	if !ok {
		return nil, 0
	}
	var pivot *listEntry
	if start != nil {
		pivot = &listEntry{key: *start}
	}
	if e := p.lone; e != nil {
		if !f.keeps(e) {
			return nil, 0
		}
		if pivot != nil && !pivot.key.before(e.key) {
			return nil, 1 // the cursor is at or after it
		}
		return append(buf[0][:0], e), 1
	}
	page = buf[0][:0]
	next := buf[1][:0]
	for st, tree := range p.trees {
		if tree == nil || (f.statuses != 0 && f.statuses&(1<<st) == 0) {
			continue
		}
		total += countMatching(tree, f)
		next = mergeTree(next[:0], page, tree, f, pivot, limit)
		page, next = next, page
	}
	return page, total
}

// keeps reports whether f lists e, whatever the page.
func (f *listFilter) keeps(e *listEntry) bool {
	st := statusIndex(e.rec.run.Status)
	return st >= 0 && (f.statuses == 0 || f.statuses&(1<<st) != 0) && (!f.hasAfter || e.key.at >= f.statusAfter)
}

// countMatching is the number of tree's runs f keeps: its length, or with
// statusAfter the runs at or after the bound, which end the tree.
func countMatching(tree *btree.BTreeG[*listEntry], f *listFilter) int {
	if !f.hasAfter {
		return tree.Len()
	}
	n := 0
	tree.Descend(func(e *listEntry) bool {
		if e.key.at < f.statusAfter {
			return false
		}
		n++
		return true
	})
	return n
}

// mergeTree appends to out, in ListRuns order, the first limit entries of
// the union of prev (already in order) and tree's entries after pivot that
// f keeps. It reads tree only until out is full.
func mergeTree(out, prev []*listEntry, tree *btree.BTreeG[*listEntry], f *listFilter, pivot *listEntry, limit int) []*listEntry {
	i := 0
	visit := func(e *listEntry) bool {
		if pivot != nil && !pivot.key.before(e.key) {
			return true // the cursor's own run: pages start strictly after it
		}
		if f.hasAfter && e.key.at < f.statusAfter {
			return false
		}
		for ; i < len(prev) && prev[i].key.before(e.key); i++ {
			if out = append(out, prev[i]); len(out) == limit {
				return false
			}
		}
		out = append(out, e)
		return len(out) < limit
	}
	if pivot != nil {
		tree.DescendLessOrEqual(pivot, visit)
	} else {
		tree.Descend(visit)
	}
	for ; i < len(prev) && len(out) < limit; i++ {
		out = append(out, prev[i])
	}
	return out
}

// oldestTerminal appends to out up to limit runs in a terminal status whose
// status timestamp is before cutoff (Unix nanoseconds), oldest first per
// status.
func (x *runIndex) oldestTerminal(out []*runRecord, cutoff int64, limit int) []*runRecord {
	all, ok := x.parts[partitionKey{}]
	if !ok {
		return out
	}
	if e := all.lone; e != nil {
		if e.rec.run.Status.Terminal() && e.key.at < cutoff && limit > len(out) {
			out = append(out, e.rec)
		}
		return out
	}
	for _, st := range interop.AllStatuses() {
		tree := all.trees[statusIndex(st)]
		if !st.Terminal() || tree == nil {
			continue
		}
		tree.Ascend(func(e *listEntry) bool {
			if len(out) == limit || e.key.at >= cutoff {
				return false
			}
			out = append(out, e.rec)
			return true
		})
	}
	return out
}
