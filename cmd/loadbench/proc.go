package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wopinterop/wopinterop/internal/processcpu"
)

// Each server runs in a process of its own, this binary re-executed with
// serveEnv naming the server: the clients' work and the other servers'
// heaps stay out of its CPU time, which it reports itself over a control
// endpoint. The parent writes the process one serveConfig line on stdin;
// the process answers one serveReady line on stdout, then serves until
// its stdin closes.
const serveEnv = "LOADBENCH_SERVE"

// serveConfig is what a server process is told.
type serveConfig struct {
	ListSize  int      `json:"listSize"`
	PushAllow string   `json:"pushAllow,omitempty"` // ours: the receiver's origin
	Answers   *answers `json:"answers,omitempty"`   // bare: its fixed results
	// CPUProfile is where the process writes a CPU profile of itself,
	// from when it serves until it ends; "" for none.
	CPUProfile string `json:"cpuProfile,omitempty"`
}

// serveReady is how a server process is reached.
type serveReady struct {
	A2AURL   string `json:"a2aURL,omitempty"`
	MCPURL   string `json:"mcpURL,omitempty"`
	Auth     string `json:"auth"`
	ListAuth string `json:"listAuth,omitempty"`
	Tenant   string `json:"tenant,omitempty"`
	Held     bool   `json:"held,omitempty"`
	PushType string `json:"pushType,omitempty"`
	TaskID   string `json:"taskID,omitempty"`
	Control  string `json:"control"`
}

// serveMain is a server process: name is the server it runs. It returns
// the exit code.
func serveMain(name string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	in := bufio.NewReader(stdin)
	line, err := in.ReadBytes('\n')
	var cfg serveConfig
	if err == nil {
		err = json.Unmarshal(line, &cfg)
	}
	if err != nil {
		fmt.Fprintf(stderr, "loadbench %s: read the config: %v\n", name, err)
		return 2
	}
	hold := &holder{}
	var s *server
	switch name {
	case "ours":
		s, err = startOurs(ctx, cfg.ListSize, cfg.PushAllow, hold)
	case "a2ago":
		s, err = startA2AGo(ctx, cfg.ListSize, hold)
	case "gosdk":
		s, err = startGoSDK()
	case "bare":
		if cfg.Answers == nil {
			err = errors.New("no answers")
		} else {
			s, err = startBare(*cfg.Answers, hold)
		}
	default:
		err = fmt.Errorf("unknown server %q", name)
	}
	if err != nil {
		fmt.Fprintf(stderr, "loadbench %s: %v\n", name, err)
		return 1
	}
	defer s.stop()
	control, stopControl, err := serve(controlHandler(hold))
	if err != nil {
		fmt.Fprintf(stderr, "loadbench %s: control: %v\n", name, err)
		return 1
	}
	defer stopControl()
	ready := serveReady{A2AURL: s.a2aURL, MCPURL: s.mcpURL, Auth: s.auth, ListAuth: s.listAuth, Tenant: s.tenant,
		Held: s.held, PushType: s.pushType, TaskID: s.taskID, Control: control}
	if cfg.CPUProfile != "" {
		stopProfile, err := startCPUProfile(cfg.CPUProfile)
		if err != nil {
			fmt.Fprintf(stderr, "loadbench %s: %v\n", name, err)
			return 1
		}
		defer stopProfile()
	}
	if err := json.NewEncoder(stdout).Encode(ready); err != nil {
		return 1
	}
	_, _ = io.Copy(io.Discard, in) // serve until the parent closes stdin (or dies)
	return 0
}

// startCPUProfile profiles the process into path until the returned
// function is called.
func startCPUProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}, nil
}

// controlHandler is a server process's control endpoint: its own CPU time
// and the held task's updates.
func controlHandler(hold *holder) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /cpu", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, strconv.FormatInt(int64(processcpu.Used()), 10))
	})
	var mu sync.Mutex    // the parent sends one command at a time; this keeps it so
	var updates chan int // of the held task armed last
	mux.HandleFunc("POST /arm", func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		updates = hold.arm()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST /update", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		k, err := strconv.Atoi(r.URL.Query().Get("k"))
		if err != nil || k < 1 || updates == nil {
			http.Error(w, "no armed task or bad k", http.StatusBadRequest)
			return
		}
		select {
		case updates <- k:
			w.WriteHeader(http.StatusNoContent)
		case <-time.After(patience):
			http.Error(w, "the held task took no update", http.StatusGatewayTimeout)
		}
	})
	mux.HandleFunc("POST /release", func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if updates != nil {
			close(updates)
			updates = nil
		}
		w.WriteHeader(http.StatusNoContent)
	})
	return mux
}

// spawn starts server name in a process of its own and returns it once
// it serves. Its stderr goes to stderr.
func spawn(name string, cfg serveConfig, stderr io.Writer) (*server, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	conf, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), serveEnv+"="+name)
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the %s process: %w", name, err)
	}
	stop := func() {
		_ = stdin.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(patience):
			_ = cmd.Process.Kill()
			<-done
		}
	}
	answer := make(chan serveReady, 1)
	failed := make(chan error, 1)
	go func() {
		var r serveReady
		if err := json.NewDecoder(stdout).Decode(&r); err != nil {
			failed <- err
			return
		}
		answer <- r
		_, _ = io.Copy(io.Discard, stdout)
	}()
	if _, err := stdin.Write(append(conf, '\n')); err != nil {
		stop()
		return nil, fmt.Errorf("configure the %s process: %w", name, err)
	}
	select {
	case r := <-answer:
		return &server{name: name, a2aURL: r.A2AURL, mcpURL: r.MCPURL, auth: r.Auth, listAuth: r.ListAuth,
			tenant: r.Tenant, held: r.Held, pushType: r.PushType, taskID: r.TaskID, control: r.Control, stop: stop}, nil
	case err := <-failed:
		stop()
		return nil, fmt.Errorf("the %s process did not start: %w", name, err)
	case <-time.After(patience):
		stop()
		return nil, fmt.Errorf("the %s process did not start: %w", name, errTimeout)
	}
}

// controlClient reaches the server processes' control endpoints.
var controlClient = &http.Client{Timeout: 2 * patience}

// cpu is the server process's CPU time so far (user + system, its own
// getrusage(2)).
func (s *server) cpu() (time.Duration, error) {
	resp, err := controlClient.Get(s.control + "/cpu")
	if err != nil {
		return 0, fmt.Errorf("%s: read its CPU time: %w", s.name, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, fmt.Errorf("%s: read its CPU time: %w", s.name, err)
	}
	ns, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("%s: read its CPU time: HTTP %d %q", s.name, resp.StatusCode, b)
	}
	return time.Duration(ns), nil
}

// arm readies the updates of the server's next held task.
func (s *server) arm() error { return s.command("/arm") }

// update makes the held task publish k artifact updates.
func (s *server) update(k int) error { return s.command("/update?k=" + strconv.Itoa(k)) }

// release lets the held task complete.
func (s *server) release() error { return s.command("/release") }

func (s *server) command(path string) error {
	resp, err := controlClient.Post(s.control+path, "", nil)
	if err != nil {
		return fmt.Errorf("%s: %s: %w", s.name, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("%s: %s: HTTP %d %s", s.name, path, resp.StatusCode, bytes.TrimSpace(b))
	}
	return nil
}

// syncWriter serializes writes to w: the server processes' stderr is
// copied to it from a goroutine each.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
