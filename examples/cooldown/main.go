// Command cooldown is a game-style skill cooldown on a single-goroutine
// loop (package loop): a player casts skills from a script; a skill cast
// while cooling down is refused with the time left; a skill coming off
// cooldown is announced. Everything — the script, the cooldowns and a
// frame ticker — runs on the loop goroutine, so the game state needs no
// lock. The frame ticker is unreferenced, so the loop, and the program,
// end when the script and the last cooldown are done, after 3.1 seconds:
//
//	go run ./examples/cooldown
package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/timewheel/timewheel/clock"
	"github.com/timewheel/timewheel/loop"
)

func main() {
	if err := run(os.Stdout, clock.Real()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// skill is an ability with a cooldown. Its fields belong to the loop.
type skill struct {
	name     string
	cooldown time.Duration
	readyAt  time.Time   // zero when ready
	timer    *loop.Timer // announces the end of the cooldown
}

// game is the state of one player, touched only on the loop goroutine.
type game struct {
	l      *loop.Loop
	out    io.Writer
	start  time.Time
	skills map[string]*skill
	frames int
}

func (g *game) say(format string, args ...any) {
	at := g.l.Now().Sub(g.start).Round(10 * time.Millisecond)
	fmt.Fprintf(g.out, "%6v  %s\n", at, fmt.Sprintf(format, args...))
}

func (g *game) addSkill(name string, cooldown time.Duration) {
	s := &skill{name: name, cooldown: cooldown}
	s.timer = g.l.NewTimer(func() {
		s.readyAt = time.Time{}
		g.say("%s is ready", s.name)
	})
	g.skills[name] = s
}

// cast casts a skill if it is off cooldown, and starts its cooldown.
func (g *game) cast(name string) {
	s := g.skills[name]
	if !s.readyAt.IsZero() {
		left := s.readyAt.Sub(g.l.Now()).Round(10 * time.Millisecond)
		g.say("%s refused: cooling down, %v left", name, left)
		return
	}
	g.say("cast %s (cooldown %v)", name, s.cooldown)
	s.readyAt = g.l.Now().Add(s.cooldown)
	s.timer.Start(s.cooldown, 0)
}

// run plays the script on a loop with the clock c and writes the game's
// log to out.
func run(out io.Writer, c clock.Clock) error {
	l := loop.New(loop.WithClock(c))
	g := &game{l: l, out: out, start: l.Now(), skills: map[string]*skill{}}
	g.addSkill("fireball", 1500*time.Millisecond)
	g.addSkill("blink", time.Second)

	frame := l.Every(250*time.Millisecond, func() { g.frames++ })
	frame.Unref() // drawing frames does not keep the game alive

	script := []struct {
		at    time.Duration
		skill string
	}{
		{0, "fireball"},
		{200 * time.Millisecond, "blink"},
		{500 * time.Millisecond, "fireball"},
		{1400 * time.Millisecond, "blink"},
		{1600 * time.Millisecond, "fireball"},
		{2000 * time.Millisecond, "blink"},
	}
	for _, in := range script {
		l.AfterFunc(in.at, func() { g.cast(in.skill) })
	}

	if err := l.Run(); err != nil {
		return err
	}
	g.say("all cooldowns over; the loop had nothing left to do (%d frames drawn)", g.frames)
	return nil
}
