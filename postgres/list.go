package postgres

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wopinterop/wopinterop/interop"
)

// Page sizes of ListRuns (OpenWOP interop map, a2a.operations), the same
// as the embedded memstore's.
const (
	DefaultPageSize = 50
	MaxPageSize     = 100
)

// listQuery is a validated ListRunsQuery plus the reader's scope.
type listQuery struct {
	tenant, workspace, contextID, workflowID string
	statuses                                 []string
	statusAfter                              time.Time // zero: no bound
}

// ListRuns lists the runs GetRun would return to sub, filtered by q,
// newest status timestamp first with run id descending as tie-breaker
// (OpenWOP interop map, a2a.operations). PageSize 0 means DefaultPageSize;
// larger than MaxPageSize is clamped; negative is an *interop.InputError.
//
// A page is one statement: an index range scan from the cursor's position
// (keyset pagination on (tenant, status_at, id), or (tenant, context_id,
// status_at, id) with a contextId), so its cost is the page's, not the
// tenant's. Total comes from the same statement's snapshot: from the run
// counts the triggers keep when the query filters by nothing but
// workspace, workflow and statuses (a sum over at most a few hundred
// counter rows), otherwise by counting the matching runs on the same
// indexes. The cursor names the last run's position, so pages stay
// consistent while runs are added (new runs sort before it); it is signed
// with a key every replica shares and bound to the Subject's tenant and
// workspace and to the filters, and any other cursor is an
// *interop.InputError on "cursor".
func (s *Store) ListRuns(ctx context.Context, sub interop.Subject, q interop.ListRunsQuery) (interop.RunPage, error) {
	if err := ctx.Err(); err != nil {
		return interop.RunPage{}, err
	}
	size := q.PageSize
	switch {
	case size < 0:
		return interop.RunPage{}, &interop.InputError{Field: "pageSize", Reason: "must not be negative"}
	case size == 0:
		size = DefaultPageSize
	case size > MaxPageSize:
		size = MaxPageSize
	}
	lq := listQuery{tenant: sub.Tenant, workspace: sub.Workspace, contextID: q.ContextID, workflowID: q.WorkflowID}
	seen := map[interop.RunStatus]bool{}
	for _, st := range q.Statuses {
		if !st.Valid() {
			return interop.RunPage{}, &interop.InputError{Field: "statuses", Reason: "unknown run status"}
		}
		if !seen[st] {
			seen[st] = true
			lq.statuses = append(lq.statuses, string(st))
		}
	}
	if !q.StatusAfter.IsZero() {
		lq.statusAfter = ceilMicro(q.StatusAfter.UTC())
	}
	var start *listKey
	if q.Cursor != "" {
		k, ok := s.cursors.decode(lq, q.Cursor)
		if !ok {
			return interop.RunPage{}, &interop.InputError{Field: "cursor", Reason: "not a cursor issued for this query"}
		}
		start = &k
	}

	pageSQL, pageArgs := lq.statement(start, size+1, true)
	rows, err := s.pool.Query(ctx, pageSQL, pageArgs...)
	if err != nil {
		return interop.RunPage{}, fmt.Errorf("postgres: list runs: %w", err)
	}
	page := interop.RunPage{Runs: []interop.Run{}}
	for rows.Next() {
		var total int64
		run, err := scanRun(rowFunc(func(dest ...any) error {
			return rows.Scan(append([]any{&total}, dest...)...)
		}))
		if err != nil {
			rows.Close()
			return interop.RunPage{}, fmt.Errorf("postgres: list runs: %w", err)
		}
		page.Total = int(total)
		page.Runs = append(page.Runs, run)
	}
	if err := rows.Err(); err != nil {
		return interop.RunPage{}, fmt.Errorf("postgres: list runs: %w", err)
	}
	if len(page.Runs) == 0 {
		// No row carried the total.
		totalSQL, totalArgs := lq.statement(nil, 0, false)
		var total int64
		if err := s.pool.QueryRow(ctx, totalSQL, totalArgs...).Scan(&total); err != nil {
			return interop.RunPage{}, fmt.Errorf("postgres: count runs: %w", err)
		}
		page.Total = int(total)
	}
	if len(page.Runs) > size {
		page.Runs = page.Runs[:size]
		last := page.Runs[size-1]
		page.NextCursor = s.cursors.encode(lq, listKey{at: last.StatusAt, id: last.ID})
	}
	return page, nil
}

// rowFunc adapts a scan function to pgx.Row.
type rowFunc func(dest ...any) error

func (f rowFunc) Scan(dest ...any) error { return f(dest...) }

// ceilMicro rounds t up to PostgreSQL's microsecond precision: stored
// times are whole microseconds, so "at or after t" is "at or after
// ceil(t)".
func ceilMicro(t time.Time) time.Time {
	if r := t.Truncate(time.Microsecond); !r.Equal(t) {
		return r.Add(time.Microsecond)
	}
	return t
}

// statement builds the listing statement: with page, up to limit runs
// after the cursor in listing order, each row led by the total (computed
// once per statement, so from the page's snapshot); without, the total
// alone. Only the filters present appear, so the planner sees plain index
// conditions.
func (lq listQuery) statement(start *listKey, limit int, page bool) (string, []any) {
	args := []any{lq.tenant}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	where := []string{"r.tenant = $1"}
	counted := []string{"c.tenant = $1"}
	if lq.workspace != "" {
		p := arg(lq.workspace)
		where, counted = append(where, "r.workspace = "+p), append(counted, "c.workspace = "+p)
	}
	if lq.workflowID != "" {
		p := arg(lq.workflowID)
		where, counted = append(where, "r.workflow_id = "+p), append(counted, "c.workflow_id = "+p)
	}
	if len(lq.statuses) > 0 {
		p := arg(lq.statuses)
		where, counted = append(where, "r.status = ANY("+p+"::text[])"), append(counted, "c.status = ANY("+p+"::text[])")
	}
	if lq.contextID != "" {
		where = append(where, "r.context_id = "+arg(lq.contextID))
		counted = nil // per-context counts are not kept
	}
	if !lq.statusAfter.IsZero() {
		where = append(where, "r.status_at >= "+arg(lq.statusAfter))
		counted = nil
	}
	total := `SELECT count(*) FROM wopinterop_runs r WHERE ` + strings.Join(where, " AND ")
	if counted != nil {
		total = `SELECT coalesce(sum(c.n), 0)::bigint FROM wopinterop_run_counts c WHERE ` + strings.Join(counted, " AND ")
	}
	if !page {
		return total, args
	}
	if start != nil {
		where = append(where, "(r.status_at, r.id) < ("+arg(start.at)+"::timestamptz, "+arg(start.id)+"::text)")
	}
	return `SELECT (` + total + `), ` + runColumns + ` FROM wopinterop_runs r
		WHERE ` + strings.Join(where, " AND ") + `
		ORDER BY r.status_at DESC, r.id DESC LIMIT ` + arg(limit), args
}

// listKey is a position in listing order.
type listKey struct {
	at time.Time
	id string
}

// A ListRuns cursor is base64url (no padding) of
//
//	version(1) | statusAt unix micros (8, big endian) | run id | mac(16)
//
// where mac is HMAC-SHA256 over a domain label, the scope (tenant,
// workspace, filters) and the bytes before it, truncated to 16 bytes. The
// key lives in the database (wopinterop_secrets), so a cursor one replica
// issued is valid on every other, for the same tenant, workspace and
// filters only. Decoding accepts exactly the canonical encoding of a
// signed cursor and nothing else.
const (
	cursorVersion  byte = 1
	cursorMACLen        = 16
	cursorHeadLen       = 1 + 8
	maxCursorToken      = 1024 // far above any cursor this store issues
	cursorDomain        = "wopinterop/postgres/list-cursor\x00"
)

type cursorSigner struct {
	key []byte
	enc *base64.Encoding
}

func newCursorSigner(key []byte) *cursorSigner {
	return &cursorSigner{key: key, enc: base64.RawURLEncoding.Strict()}
}

// scope writes what a cursor is bound to, length-prefixed so that no two
// scopes share an encoding.
func (lq listQuery) scope(b []byte) []byte {
	for _, s := range [...]string{lq.tenant, lq.workspace, lq.contextID, lq.workflowID} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	var bits uint16
	for _, st := range lq.statuses {
		for i, known := range interop.AllStatuses() {
			if string(known) == st {
				bits |= 1 << i
			}
		}
	}
	b = binary.BigEndian.AppendUint16(b, bits)
	if lq.statusAfter.IsZero() {
		return append(b, 0)
	}
	b = append(b, 1)
	return binary.BigEndian.AppendUint64(b, uint64(lq.statusAfter.UnixMicro()))
}

func (c *cursorSigner) sign(lq listQuery, payload []byte) []byte {
	mac := hmac.New(sha256.New, c.key)
	mac.Write([]byte(cursorDomain))
	mac.Write(lq.scope(nil))
	mac.Write(payload)
	return mac.Sum(nil)[:cursorMACLen]
}

func (c *cursorSigner) encode(lq listQuery, k listKey) string {
	p := []byte{cursorVersion}
	p = binary.BigEndian.AppendUint64(p, uint64(k.at.UnixMicro()))
	p = append(p, k.id...)
	p = append(p, c.sign(lq, p)...)
	return c.enc.EncodeToString(p)
}

func (c *cursorSigner) decode(lq listQuery, token string) (listKey, bool) {
	if len(token) == 0 || len(token) > maxCursorToken {
		return listKey{}, false
	}
	raw, err := c.enc.DecodeString(token)
	// The decoder skips '\r' and '\n'; the length check rejects any token
	// that is not exactly the canonical encoding of its bytes.
	if err != nil || c.enc.EncodedLen(len(raw)) != len(token) ||
		len(raw) < cursorHeadLen+cursorMACLen || raw[0] != cursorVersion {
		return listKey{}, false
	}
	payload, mac := raw[:len(raw)-cursorMACLen], raw[len(raw)-cursorMACLen:]
	if !hmac.Equal(mac, c.sign(lq, payload)) {
		return listKey{}, false
	}
	micros := int64(binary.BigEndian.Uint64(payload[1:cursorHeadLen]))
	return listKey{at: time.UnixMicro(micros).UTC(), id: string(payload[cursorHeadLen:])}, true
}
