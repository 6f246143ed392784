package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
)

// A command is one of durable's subcommands. Its setup defines the
// command's own flags and returns the function that runs it on its
// arguments (those after its name, flags taken out) once run has parsed
// the command line: parsing, -h, the usage and the exit status are
// run's.
type command struct {
	name    string
	args    string // the synopsis after the name: "[-limit n] pending|running|dead"
	summary string // one line
	setup   func(fs *flag.FlagSet) runFunc
}

// A runFunc runs a command on its arguments. Its error decides the exit
// status: one wrapping errUsage is 2, errNotFound 3, any other 1.
type runFunc func(ctx context.Context, c *cli, args []string) error

// commands are the subcommands in the order the usage lists them. A
// command of its own file adds itself from its init with register.
var commands = []command{
	{"stats", "", "the queue's figures", statsCmd},
	{"list", "[-limit n] [-cursor c] [-payload] pending|running|dead", "jobs in a state, a page at a time", listCmd},
	{"inspect", "[-payload] ID", "one job", inspectCmd},
	{"retry", "ID... | retry -all [-kind k]", "dead jobs due again now", deadCmd("retry")},
	{"delete", "ID... | delete -all [-kind k]", "dead jobs deleted", deadCmd("delete")},
	{"cancel", "ID...", "jobs deleted, whatever their state", cancelCmd},
	{"pause", "[-force] [kind]", "the queue (or the kind) claims no more jobs", pauseCmd(true)},
	{"resume", "[kind]", "it claims again", pauseCmd(false)},
	{"move", "", "with -shards k: shard 0's jobs moved to their shards", moveCmd},
}

// register adds a command; an init of the command's file calls it. It
// panics on a name taken.
func register(c command) {
	if find(c.name) != nil {
		panic("durable: two commands named " + c.name)
	}
	commands = append(commands, c)
}

// find returns the command named name, nil if none.
func find(name string) *command {
	for i := range commands {
		if commands[i].name == name {
			return &commands[i]
		}
	}
	return nil
}

// noFlags is the setup of a command without flags of its own.
func noFlags(f runFunc) func(*flag.FlagSet) runFunc {
	return func(*flag.FlagSet) runFunc { return f }
}

const synopsis = "usage: durable [flags] command [flags] [args]"

// shortUsage writes the synopsis of cmd, or of every command if nil.
func shortUsage(w io.Writer, cmd *command) {
	if cmd != nil {
		fmt.Fprintf(w, "usage: durable [flags] %s %s\n", cmd.name, cmd.args)
		fmt.Fprintf(w, "'durable %s -h' for its flags.\n", cmd.name)
		return
	}
	fmt.Fprintf(w, "%s\n\ncommands:\n", synopsis)
	for _, c := range commands {
		line := strings.TrimSpace(c.name + " " + c.args)
		if len(line) > 38 {
			fmt.Fprintf(w, "  %s\n  %-38s %s\n", line, "", c.summary)
		} else {
			fmt.Fprintf(w, "  %-38s %s\n", line, c.summary)
		}
	}
	fmt.Fprintln(w, "\n'durable -h' for the flags and exit statuses.")
}

// help writes the usage that -h asks for: cmd's and its own flags, or
// every command's; then the flags of every command and the exit
// statuses.
func help(w io.Writer, cmd *command, own *flag.FlagSet) {
	if cmd != nil {
		fmt.Fprintf(w, "usage: durable [flags] %s %s\n\n%s.\n", cmd.name, cmd.args, cmd.summary)
		if n := 0; own != nil {
			own.VisitAll(func(*flag.Flag) { n++ })
			if n > 0 {
				fmt.Fprintf(w, "\nflags of %s:\n", cmd.name)
				own.SetOutput(w)
				own.PrintDefaults()
			}
		}
	} else {
		shortUsage(w, nil)
	}
	fmt.Fprintln(w, "\nflags of every command (before or after it; -- ends the flags):")
	g := flag.NewFlagSet("durable", flag.ContinueOnError)
	(&globals{}).define(g)
	g.SetOutput(w)
	g.PrintDefaults()
	fmt.Fprint(w, `
exit status: 0 done; 1 an error (Redis failed, or could not be reached);
2 a usage error (nothing was done); 3 a job, dead job or queue named does
not exist.
`)
}
