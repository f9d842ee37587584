package hostapp

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/wopinterop/wopinterop/a2a"
	"github.com/wopinterop/wopinterop/a2a/cardsig"
	"github.com/wopinterop/wopinterop/egress"
)

// Exit codes.
const (
	exitOK    = 0
	exitFault = 1
	exitUsage = 2
)

// shutdownGrace bounds how long in-flight requests may take once the host
// drains.
const shutdownGrace = 10 * time.Second

// Connection timeouts (see setServerTimeouts) and retention defaults.
const (
	readHeaderTimeout      = 10 * time.Second
	idleTimeout            = 2 * time.Minute
	defaultRunRetention    = 24 * time.Hour
	defaultHostEventMaxAge = 24 * time.Hour
)

// setServerTimeouts gives srv the host's connection timeouts. ReadTimeout
// covers the whole request, header and body: net/http clears that
// deadline once the body has been read (at once for a request without
// one), so it bounds what a client sends — a body trickled in byte by
// byte, on any route — and never the response. WriteTimeout stays unset:
// it is one deadline for the whole response and would cut every event
// stream at that age; the host's own stream sets one per frame instead
// (sse.go), and the library's streams end with their runs or the drain.
func setServerTimeouts(srv *http.Server, header, body time.Duration) {
	srv.ReadHeaderTimeout = header
	srv.ReadTimeout = header + body
	srv.WriteTimeout = 0
	srv.IdleTimeout = idleTimeout
}

// Main is the whole program of a host command on backend: it parses args
// (the host's flags and the backend's), serves until ctx is done, then
// shuts down gracefully, and returns the exit code. It prints
// "listening on http://ADDR" to stdout once it serves. onDrain, when not
// nil, is called as the drain starts (a main uses it to restore default
// signal handling, so a second ^C kills).
func Main(ctx context.Context, args []string, stdout, stderr io.Writer, onDrain func(), backend Backend) int {
	return run(ctx, args, stdout, stderr, onDrain, backend)
}

// RunMain is a command's main: Main on the process's arguments and
// standard streams until SIGINT or SIGTERM, then exit.
func RunMain(backend Backend) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(Main(ctx, os.Args[1:], os.Stdout, os.Stderr, stop, backend))
}

// run is Main; a zero backend is the in-memory store.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, onDrain func(), backends ...Backend) int {
	var backend Backend
	if len(backends) > 0 {
		backend = backends[0]
	}
	if backend.Open == nil {
		backend = memoryBackend()
	}
	fs := flag.NewFlagSet("host", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if backend.Flags != nil {
		backend.Flags(fs)
	}
	addr := fs.String("addr", "127.0.0.1:8080", "listen `address`; port 0 picks a free port")
	keysSpec := fs.String("keys", defaultKeys, "bearer API keys as `tenant=key,...` (replaces the demo keys)")
	publicURL := fs.String("public-url", "", "public origin for links in responses and on the agent card (default: http://ADDR)")
	pushAllowSpec := fs.String("push-allow", "", "exact `origins` (scheme://host:port,...) A2A pushes may reach although plain http or on loopback/private addresses: local receivers")
	peerAllowSpec := fs.String("peer-allow", "", "exact `origins` (scheme://host:port,...) remote A2A agents and MCP servers may be reached at although plain http or on loopback/private addresses: local peers (-a2a-agent, -mcp-server, the a2a and mcp seams)")
	var agents agentFlags
	fs.Var(&agents, "a2a-agent", "admit a remote A2A agent as `alias=CARD_URL` (repeatable); the delegate-remote workflow calls it. Every skill on its card is pinned at start by its current digest")
	var mcpServers mcpServerFlags
	fs.Var(&mcpServers, "mcp-server", "admit a remote MCP server as `alias=URL` (repeatable); the conformance-mcp-client workflow calls its tools. Every tool it lists is pinned at start by its current digest")
	bearerFile := fs.String("a2a-bearer-file", "", "`file` holding the bearer token presented to remote A2A agents (default: none to -a2a-agent agents; the a2a seam presents a per-process random one when a call asks to authenticate)")
	routingSpec := fs.String("routing-secret", "", "`secret` (hex or base64, at least 32 bytes) deriving the agents' A2A routing values (default: random per process, so they change on restart)")
	sealSpec := fs.String("seal-key", "", "`key` (hex or base64, at least 32 bytes) sealing MCP requestState values (default: random per process, so a pending multi-round call does not survive a restart)")
	bodyTimeout := fs.Duration("body-timeout", defaultBodyTimeout, "how long a client may take to send a request body; a slower one is refused and its connection closed")
	runRetention := fs.Duration("run-retention", defaultRunRetention, "how long a finished run is kept after it ended (0 keeps every run); then it reads as unknown and its idempotency key is free")
	hostEventAge := fs.Duration("host-event-max-age", defaultHostEventMaxAge, "how long a durable host event (negotiation.decided records) is kept for GET /host/events resumption (0: only the 10,000 newest per tenant bound it)")
	levelSpec := fs.String("log-level", "info", "log `level`: debug, info, warn or error (one line per request at info, faults at error)")
	cardKeyFile := fs.String("card-signing-key", "", "`file` holding a private key (a JWK, or PEM) that signs every A2A agent card served; its kid is the JWK's, else the key's RFC 7638 thumbprint (default: cards are unsigned)")
	seams := fs.Bool("conformance-seams", false, "TEST ONLY: serve the OpenWOP conformance seams (POST "+mintPath+", POST "+a2aInvokePath+", POST "+mcpInvokePath+"). "+
		"It lets any holder of a key mint more keys for its tenant, keys that outlive a change of -keys until restart: never enable it where real users or data are")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "host: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	keys, err := parseKeys(*keysSpec)
	if err != nil {
		fmt.Fprintf(stderr, "host: invalid -keys: %v\n", err)
		return exitUsage
	}
	if *publicURL != "" {
		if u, err := url.Parse(*publicURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "" {
			fmt.Fprintf(stderr, "host: invalid -public-url %q: want an origin such as https://example.com\n", *publicURL)
			return exitUsage
		}
	}
	var routingSecret []byte
	if *routingSpec != "" {
		if routingSecret, err = parseRoutingSecret(*routingSpec); err != nil {
			fmt.Fprintf(stderr, "host: invalid -routing-secret: %v\n", err)
			return exitUsage
		}
	}
	var sealKey []byte
	if *sealSpec != "" {
		if sealKey, err = parseSealKey(*sealSpec); err != nil {
			fmt.Fprintf(stderr, "host: invalid -seal-key: %v\n", err)
			return exitUsage
		}
	}
	var cardSigner *cardsig.Signer
	if *cardKeyFile != "" {
		if cardSigner, err = loadCardSigner(*cardKeyFile); err != nil {
			fmt.Fprintf(stderr, "host: invalid -card-signing-key: %v\n", err)
			return exitUsage
		}
	}
	pushAllow, err := parsePushAllow(*pushAllowSpec)
	if err != nil {
		fmt.Fprintf(stderr, "host: invalid -push-allow: %v\n", err)
		return exitUsage
	}
	peerAllow, err := parseAllow(*peerAllowSpec)
	if err != nil {
		fmt.Fprintf(stderr, "host: invalid -peer-allow: %v\n", err)
		return exitUsage
	}
	var peerBearer string
	if *bearerFile != "" {
		if peerBearer, err = readBearerFile(*bearerFile); err != nil {
			fmt.Fprintf(stderr, "host: invalid -a2a-bearer-file: %v\n", err)
			return exitUsage
		}
	}
	switch {
	case *bodyTimeout <= 0:
		fmt.Fprintf(stderr, "host: invalid -body-timeout %v: want a positive duration\n", *bodyTimeout)
		return exitUsage
	case *runRetention < 0:
		fmt.Fprintf(stderr, "host: invalid -run-retention %v: want 0 or a positive duration\n", *runRetention)
		return exitUsage
	case *hostEventAge < 0:
		fmt.Fprintf(stderr, "host: invalid -host-event-max-age %v: want 0 or a positive duration\n", *hostEventAge)
		return exitUsage
	}
	level, err := parseLogLevel(*levelSpec)
	if err != nil {
		fmt.Fprintf(stderr, "host: invalid -log-level: %v\n", err)
		return exitUsage
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	// An interface holding a nil *cardsig.Signer is not nil: set it only
	// when a key was given.
	var signer a2a.CardSigner
	if cardSigner != nil {
		signer = cardSigner
		logger.Info("agent cards are signed", "kid", cardSigner.KeyID(), "alg", cardSigner.Algorithm())
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "host: %v\n", err)
		return exitFault
	}
	base := *publicURL
	if base == "" {
		base = "http://" + ln.Addr().String()
	}

	auth := newBearerKeys(keys)
	opened, err := backend.Open(ctx, OpenOptions{
		Tenants: auth.Tenants(), BaseURL: strings.TrimSuffix(base, "/"), Logger: logger,
		RunRetention: *runRetention, HostEventMaxAge: *hostEventAge, SealKey: sealKey,
	})
	if err != nil {
		_ = ln.Close()
		fmt.Fprintf(stderr, "host: %v\n", err)
		return exitFault
	}
	store := opened
	drain, startDrain := context.WithCancel(context.Background())
	defer startDrain()
	handler, err := newHandler(config{
		Store: store.Store, Auth: auth, BaseURL: base, Logger: logger, Drain: drain, RoutingSecret: routingSecret,
		SealKey: sealKey, PushAllow: pushAllow, Seams: *seams, Minter: auth, BodyTimeout: *bodyTimeout,
		CardSigner: signer, PeerAllow: peerAllow, Agents: agents, PeerBearer: peerBearer, MCPServers: mcpServers,
		Workflows: store.Workflows, Tenants: auth.Tenants(), Ledger: store.Ledger, Push: store.Push,
	})
	if err != nil {
		_ = ln.Close()
		_ = store.Close()
		fmt.Fprintf(stderr, "host: %v\n", err)
		return exitFault
	}
	srv := &http.Server{
		Handler:  handler,
		ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	setServerTimeouts(srv, readHeaderTimeout, *bodyTimeout)
	// Shutdown waits for idle connections; event streams and long polls
	// never go idle on their own, so the drain ends them first.
	srv.RegisterOnShutdown(startDrain)

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Fprintf(stdout, "listening on http://%s\n", ln.Addr())

	code := exitOK
	select {
	case <-ctx.Done():
		if onDrain != nil {
			onDrain()
		}
		shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		if err := srv.Shutdown(shutdownCtx); err != nil {
			logger.Error("shutdown", "err", err)
			code = exitFault
		}
		<-served
	case err := <-served:
		logger.Error("serve", "err", err)
		code = exitFault
	}
	// The library closes next: MCP listen streams end, push delivery
	// drains, and the audit records still queued go to the store, which
	// therefore closes last.
	closeCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := handler.Close(closeCtx); err != nil {
		logger.Error("close interop", "err", err)
		code = exitFault
	}
	if st := handler.interop.AuditStats(); st.Dropped > 0 {
		logger.Warn("negotiation.decided records dropped during this run", "dropped", st.Dropped, "delivered", st.Delivered)
	}
	if err := store.Close(); err != nil {
		logger.Error("close store", "err", err)
		code = exitFault
	}
	return code
}

// parsePushAllow reads -push-allow: comma-separated origins, each checked
// by the push guard (no path, query or userinfo).
func parsePushAllow(spec string) ([]string, error) { return parseAllow(spec) }

// parseAllow reads an origin allowlist flag (-push-allow, -peer-allow):
// comma-separated origins, each checked by the egress guard (no path,
// query or userinfo).
func parseAllow(spec string) ([]string, error) {
	var origins []string
	for _, o := range strings.Split(spec, ",") {
		if o = strings.TrimSpace(o); o != "" {
			origins = append(origins, o)
		}
	}
	if _, err := egress.NewGuard(egress.GuardOptions{AllowOrigins: origins}); err != nil {
		return nil, err
	}
	return origins, nil
}

// loadCardSigner reads -card-signing-key: a private JWK (its kid is the
// signatures') or a PEM private key (kid: its RFC 7638 thumbprint).
// Errors name the file, never its contents.
func loadCardSigner(path string) (*cardsig.Signer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return cardsig.ParseSigner(data, cardsig.SignerOptions{})
}
