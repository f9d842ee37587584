package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
)

func main() {
	if name := os.Getenv(serveEnv); name != "" {
		os.Exit(serveMain(name, os.Stdin, os.Stdout, os.Stderr))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run is the command: it parses args, benches and prints the table (or
// JSON), and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("loadbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg config
	fs.IntVar(&cfg.requests, "n", 5000, "requests per scenario and server (fan-out: updates ÷ 10; push: deliveries)")
	fs.IntVar(&cfg.clients, "c", 16, "concurrent closed-loop clients")
	fs.IntVar(&cfg.rounds, "rounds", 5, "rounds per scenario, alternating between the servers")
	fs.IntVar(&cfg.listSize, "list-size", 10000, "tasks the listed tenant holds")
	fs.IntVar(&cfg.subscribers, "subscribers", 100, "SSE subscribers on the fan-out task")
	scenarios := fs.String("scenarios", strings.Join(allScenarios, ","), "comma-separated scenarios to run")
	fs.StringVar(&cfg.cpuProfile, "cpuprofile", "", "path prefix: each server process writes a CPU profile of itself to PREFIX-NAME.pprof, this process (clients, push receiver) to PREFIX-loadbench.pprof")
	asJSON := fs.Bool("json", false, "print JSON instead of the table")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 || cfg.requests < 1 || cfg.clients < 1 || cfg.rounds < 1 || cfg.listSize < 1 || cfg.subscribers < 1 {
		fmt.Fprintln(stderr, "loadbench: -n, -c, -rounds, -list-size and -subscribers must be positive; no arguments")
		return 2
	}
	for _, sc := range strings.Split(*scenarios, ",") {
		if !contains(allScenarios, sc) {
			fmt.Fprintf(stderr, "loadbench: unknown scenario %q (want some of %s)\n", sc, strings.Join(allScenarios, ","))
			return 2
		}
		cfg.scenarios = append(cfg.scenarios, sc)
	}
	if cfg.cpuProfile != "" {
		stopProfile, err := startCPUProfile(cfg.profilePath("loadbench"))
		if err != nil {
			fmt.Fprintf(stderr, "loadbench: %v\n", err)
			return 1
		}
		defer stopProfile()
	}
	rep, err := bench(ctx, cfg, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "loadbench: %v\n", err)
		return 1
	}
	if *asJSON {
		err = rep.writeJSON(stdout)
	} else {
		err = rep.writeTable(stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "loadbench: %v\n", err)
		return 1
	}
	if bad := rep.failures(); bad != "" {
		fmt.Fprintf(stderr, "loadbench: wrong answers: %s\n", bad)
		return 1
	}
	return 0
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
