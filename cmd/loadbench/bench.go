package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/wopinterop/wopinterop/internal/processcpu"
)

// config is what a bench run does.
type config struct {
	requests, clients, rounds int
	listSize, subscribers     int
	scenarios                 []string
	// cpuProfile, when set, is the path prefix of a CPU profile each
	// server process writes of itself (prefix-NAME.pprof).
	cpuProfile string
}

// profilePath is where server name writes its CPU profile; "" for none.
func (c config) profilePath(name string) string {
	if c.cpuProfile == "" {
		return ""
	}
	return c.cpuProfile + "-" + name + ".pprof"
}

// servers are the servers under test, in table order.
type servers struct {
	ours, a2ago, gosdk, bare *server
	receiver                 *receiver
}

func (s *servers) all() []*server { return []*server{s.ours, s.a2ago, s.gosdk, s.bare} }

func (s *servers) stop() {
	for _, x := range s.all() {
		if x != nil {
			x.stop()
		}
	}
	if s.receiver != nil {
		s.receiver.stop()
	}
}

// start starts every server in a process of its own and gives each its
// fixtures; the push receiver stays in this process with the clients.
func start(cfg config, client *http.Client, stderr io.Writer) (*servers, error) {
	var s servers
	var err error
	if s.receiver, err = startReceiver(); err != nil {
		return nil, err
	}
	fail := func(err error) (*servers, error) {
		s.stop()
		return nil, err
	}
	if s.ours, err = spawn("ours", serveConfig{ListSize: cfg.listSize, PushAllow: s.receiver.origin, CPUProfile: cfg.profilePath("ours")}, stderr); err != nil {
		return fail(err)
	}
	if s.a2ago, err = spawn("a2ago", serveConfig{ListSize: cfg.listSize, CPUProfile: cfg.profilePath("a2ago")}, stderr); err != nil {
		return fail(err)
	}
	if s.gosdk, err = spawn("gosdk", serveConfig{CPUProfile: cfg.profilePath("gosdk")}, stderr); err != nil {
		return fail(err)
	}
	for _, x := range []*server{s.ours, s.a2ago} {
		if err := prepare(client, x); err != nil {
			return fail(err)
		}
	}
	fixed, err := probe(client, s.ours, cfg.listSize)
	if err != nil {
		return fail(err)
	}
	if s.bare, err = spawn("bare", serveConfig{Answers: &fixed, CPUProfile: cfg.profilePath("bare")}, stderr); err != nil {
		return fail(err)
	}
	return &s, nil
}

// bench starts the servers, runs every scenario of cfg against every
// server that speaks it and reports.
func bench(ctx context.Context, cfg config, progress io.Writer) (*report, error) {
	progress = &syncWriter{w: progress} // the server processes' stderr goes there too
	setup := newClient(cfg.clients)
	s, err := start(cfg, setup, progress)
	if err != nil {
		return nil, err
	}
	defer s.stop()
	rep := &report{Config: reportConfig{Requests: cfg.requests, Clients: cfg.clients, Rounds: cfg.rounds,
		ListSize: cfg.listSize, Subscribers: cfg.subscribers}}
	for _, sc := range cfg.scenarios {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		fmt.Fprintf(progress, "loadbench: %s\n", sc)
		var rows []row
		switch sc {
		case scFanout:
			rows, err = benchFanout(ctx, cfg, s)
		case scPush:
			rows, err = benchPush(ctx, cfg, s, progress)
		default:
			rows, err = benchUnary(cfg, sc, s)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", sc, err)
		}
		rep.add(sc, rows)
	}
	return rep, nil
}

// benchUnary runs a request-answer scenario: each round drives
// requests/rounds requests against every server that speaks it, the
// servers' order rotating from round to round.
func benchUnary(cfg config, sc string, s *servers) ([]row, error) {
	type lane struct {
		srv    *server
		u      unary
		client *http.Client
		got    sample
	}
	var lanes []*lane
	for _, x := range s.all() {
		if u, ok := unaryFor(sc, x, cfg.listSize); ok {
			lanes = append(lanes, &lane{srv: x, u: u, client: newClient(cfg.clients)})
		}
	}
	per := max(1, cfg.requests/cfg.rounds)
	next := 1
	for _, l := range lanes { // warm the connections and the caches
		warm := drive(l.client, l.u, next, min(per, 2*cfg.clients), cfg.clients)
		l.got.add(sample{errs: warm.errs, firstErr: warm.firstErr}) // a wrong answer counts, its time does not
		next += 2 * cfg.clients
	}
	for r := range cfg.rounds {
		for i := range lanes {
			l := lanes[(i+r)%len(lanes)]
			cpu0, err := l.srv.cpu()
			if err != nil {
				return nil, err
			}
			mine := processcpu.Used()
			got := drive(l.client, l.u, next, per, cfg.clients)
			got.clientCPU = processcpu.Used() - mine
			cpu1, err := l.srv.cpu()
			if err != nil {
				return nil, err
			}
			got.cpu = cpu1 - cpu0
			l.got.add(got)
			next += per
		}
	}
	rows := make([]row, 0, len(lanes))
	for _, l := range lanes {
		l.client.CloseIdleConnections()
		rows = append(rows, newRow(l.srv.name, l.got))
	}
	return rows, nil
}

// errTimeout is a scenario that stopped making progress.
var errTimeout = errors.New("timed out")

// patience bounds every wait for a server in the streaming scenarios.
const patience = 30 * time.Second
