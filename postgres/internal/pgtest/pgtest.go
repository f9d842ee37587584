// Package pgtest runs the tests of this module against a throw-away
// PostgreSQL cluster: one cluster per test binary, started on first use in
// a temporary directory on a free loopback port, and a fresh database per
// test.
//
// A test package wires it in once:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
//
// and a test asks for a database with [NewPool] or [NewDSN]. When the
// server binaries (initdb, postgres) are neither on PATH nor in
// /usr/lib/postgresql/*/bin, those tests skip — unless the environment sets
// WOPINTEROP_REQUIRE_POSTGRES=1 (as CI does), when they fail.
//
// initdb refuses to run as root, so as root the cluster runs as the
// unprivileged user "nobody" (or uid/gid 65534 when no such user exists)
// in a directory it owns. Connections use trust authentication on
// 127.0.0.1 only, with fsync off: the data is thrown away.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// RequireEnv names the variable that turns a missing PostgreSQL into a
// failure instead of a skip.
const RequireEnv = "WOPINTEROP_REQUIRE_POSTGRES"

// superuser is the bootstrap superuser initdb creates.
const superuser = "wopinterop"

// process is the cluster of this test binary, started on first use. It is
// process-wide by design: one cluster per `go test` process.
var process struct {
	once    sync.Once
	cluster *Cluster
	err     error
	dbs     atomic.Int64
}

// Main runs the tests of m and stops the cluster if a test started one. It
// returns the exit code for os.Exit.
func Main(m *testing.M) int {
	code := m.Run()
	if c := process.cluster; c != nil {
		if err := c.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "pgtest:", err)
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}

// Required reports whether the environment demands a real PostgreSQL.
func Required() bool { return os.Getenv(RequireEnv) == "1" }

// ErrNoBinaries reports that the PostgreSQL server binaries are not
// installed.
var ErrNoBinaries = errors.New("pgtest: PostgreSQL server binaries (initdb, postgres) not found on PATH or in /usr/lib/postgresql/*/bin")

// cluster returns the process's cluster, starting it on first use, or
// skips t (fails it when PostgreSQL is required).
func cluster(t testing.TB) *Cluster {
	t.Helper()
	process.once.Do(func() {
		process.cluster, process.err = Start()
	})
	if process.err == nil {
		return process.cluster
	}
	if skip(process.err, Required()) {
		t.Skipf("%v; set %s=1 to fail instead", process.err, RequireEnv)
	}
	t.Fatalf("%v", process.err)
	return nil
}

// skip decides what a test does when no cluster could start: skip when
// PostgreSQL is simply not installed and not required; fail otherwise — an
// installed server that does not start is a broken setup, not an absent
// one.
func skip(err error, required bool) bool {
	return errors.Is(err, ErrNoBinaries) && !required
}

// NewDSN creates a fresh, empty database for t on the process's cluster and
// returns its connection string. The database is dropped when t ends.
func NewDSN(t testing.TB) string {
	t.Helper()
	c := cluster(t)
	name := fmt.Sprintf("t%d_%d", os.Getpid(), process.dbs.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := c.exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("pgtest: drop database: %v", err)
		}
	})
	return c.DSN(name)
}

// NewPool is NewDSN plus a pool on it, closed when t ends (after the
// cleanups t registers later, such as closing a store over the pool).
func NewPool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	return Pool(t, NewDSN(t))
}

// Pool opens a pool on dsn, closed when t ends.
func Pool(t testing.TB, dsn string) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	cfg.MaxConns = 16
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatalf("pgtest: open pool: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// Cluster is a running throw-away PostgreSQL cluster.
type Cluster struct {
	dir  string // owns data/, the socket and the log
	port int
	cmd  *exec.Cmd
	done chan struct{} // closed when the server process has exited
	// exitErr is the server's exit status, valid once done is closed.
	exitErr error
}

// DSN returns the connection string of database name.
func (c *Cluster) DSN(name string) string {
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", superuser, c.port, name)
}

// Start initialises and starts a cluster in a new temporary directory. It
// returns an error wrapping ErrNoBinaries when PostgreSQL is not
// installed.
func Start() (*Cluster, error) {
	bin, err := findBinaries()
	if err != nil {
		return nil, err
	}
	cred, err := unprivileged()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "wopinterop-pgtest-")
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	c := &Cluster{dir: dir, done: make(chan struct{})}
	if err := c.start(bin, cred); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return c, nil
}

func (c *Cluster) start(bin string, cred *syscall.Credential) error {
	if cred != nil {
		// The server user must own its directory, and reach it: MkdirTemp
		// made it 0700 for root.
		if err := os.Chown(c.dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return fmt.Errorf("pgtest: give %s to the server user: %w", c.dir, err)
		}
		if err := reachable(c.dir); err != nil {
			return err
		}
	}
	data := filepath.Join(c.dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", superuser,
		"--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL}
	initdb.Dir = c.dir
	if out, err := initdb.CombinedOutput(); err != nil {
		return fmt.Errorf("pgtest: initdb: %w\n%s", err, out)
	}

	port, err := freePort()
	if err != nil {
		return err
	}
	c.port = port
	logPath := filepath.Join(c.dir, "server.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	defer logFile.Close()
	// The server is a child of this process, killed with it (Pdeathsig),
	// so a crashed test binary leaves no server behind.
	c.cmd = exec.Command(filepath.Join(bin, "postgres"), "-D", data,
		"-h", "127.0.0.1", "-p", strconv.Itoa(port), "-k", c.dir,
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "max_connections=400", "-c", "log_min_messages=warning")
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL}
	c.cmd.Dir = c.dir
	c.cmd.Stdout, c.cmd.Stderr = logFile, logFile
	if err := c.cmd.Start(); err != nil {
		return fmt.Errorf("pgtest: start postgres: %w", err)
	}
	go func() {
		c.exitErr = c.cmd.Wait()
		close(c.done)
	}()
	if err := c.waitReady(30 * time.Second); err != nil {
		_ = c.Stop()
		log, _ := os.ReadFile(logPath)
		return fmt.Errorf("pgtest: postgres did not become ready: %w\n%s", err, log)
	}
	return nil
}

// waitReady polls until the server accepts connections, it exits, or the
// timeout passes.
func (c *Cluster) waitReady(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := c.exec(ctx, "SELECT 1")
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-c.done:
			return fmt.Errorf("server exited: %v", c.exitErr)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return err
		}
	}
}

// exec runs one statement in the maintenance database.
func (c *Cluster) exec(ctx context.Context, sql string) error {
	conn, err := pgx.Connect(ctx, c.DSN("postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, sql)
	return err
}

// Stop shuts the server down (fast shutdown, then a kill after ten
// seconds) and removes its directory.
func (c *Cluster) Stop() error {
	if c.cmd != nil && c.cmd.Process != nil {
		_ = c.cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-c.done:
		case <-time.After(10 * time.Second):
			_ = c.cmd.Process.Kill()
			<-c.done
		}
	}
	if err := os.RemoveAll(c.dir); err != nil {
		return fmt.Errorf("pgtest: remove %s: %w", c.dir, err)
	}
	return nil
}

// findBinaries returns the directory holding initdb and postgres: PATH
// first, then the newest /usr/lib/postgresql/*/bin (Debian's layout).
func findBinaries() (string, error) {
	if initdb, err := exec.LookPath("initdb"); err == nil {
		dir := filepath.Dir(initdb)
		if _, err := os.Stat(filepath.Join(dir, "postgres")); err == nil {
			return dir, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, dir := range dirs {
		if executable(filepath.Join(dir, "initdb")) && executable(filepath.Join(dir, "postgres")) {
			return dir, nil
		}
	}
	return "", ErrNoBinaries
}

func version(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

func executable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// unprivileged returns the credential to run the server with: nil when
// this process is not root, else that of "nobody".
func unprivileged() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	uid, gid := uint32(65534), uint32(65534)
	if u, err := user.Lookup("nobody"); err == nil {
		if n, err := strconv.ParseUint(u.Uid, 10, 32); err == nil {
			uid = uint32(n)
		}
		if n, err := strconv.ParseUint(u.Gid, 10, 32); err == nil {
			gid = uint32(n)
		}
	}
	return &syscall.Credential{Uid: uid, Gid: gid, Groups: []uint32{}}, nil
}

// reachable checks that every ancestor of dir lets others search it, which
// the unprivileged server user needs.
func reachable(dir string) error {
	for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return fmt.Errorf("pgtest: %w", err)
		}
		if fi.Mode().Perm()&0o001 == 0 {
			return fmt.Errorf("pgtest: the server user cannot reach %s: %s is not searchable by others (set TMPDIR to a directory such as /tmp)", dir, d)
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgtest: find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
