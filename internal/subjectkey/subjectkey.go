// Package subjectkey names an authorization context: everything about a
// caller a host could authorize on. A cache of what a RunStore answered
// for one Subject (its workflows, its tools) is keyed by it, so that no
// caller is ever served what the store answered for another. The a2a and
// mcp surfaces share it.
package subjectkey

import (
	"slices"
	"strconv"
	"strings"

	"github.com/wopinterop/wopinterop/interop"
)

// Of is the key of sub: tenant, workspace, principal, authentication, the
// scopes as a set, and the forwarding actor, each length-prefixed so that
// no two Subjects share a key.
func Of(sub interop.Subject) string {
	var b strings.Builder
	b.Grow(size(sub))
	write(&b, sub)
	return b.String()
}

// size is about the length of sub's key, so that it is built in one
// allocation.
func size(sub interop.Subject) int {
	n := len(sub.Tenant) + len(sub.Workspace) + len(sub.Principal) + 16
	for _, sc := range sub.Scopes {
		n += len(sc) + 4
	}
	if sub.Actor != nil {
		n += size(*sub.Actor) + 1
	}
	return n
}

func write(b *strings.Builder, sub interop.Subject) {
	for _, f := range [...]string{sub.Tenant, sub.Workspace, sub.Principal} {
		field(b, f)
	}
	if sub.Authenticated {
		b.WriteByte('A')
	}
	scopes := sub.Scopes
	if !sortedSet(scopes) {
		scopes = slices.Clone(scopes)
		slices.Sort(scopes)
		scopes = slices.Compact(scopes)
	}
	b.WriteString(strconv.Itoa(len(scopes)))
	b.WriteByte('#')
	for _, sc := range scopes {
		field(b, sc)
	}
	if sub.Actor != nil {
		b.WriteByte('>')
		write(b, *sub.Actor)
	}
}

func field(b *strings.Builder, f string) {
	b.WriteString(strconv.Itoa(len(f)))
	b.WriteByte(':')
	b.WriteString(f)
}

// sortedSet reports whether s is strictly increasing: already the set the
// key is written from.
func sortedSet(s []string) bool {
	for i := 1; i < len(s); i++ {
		if s[i-1] >= s[i] {
			return false
		}
	}
	return true
}
