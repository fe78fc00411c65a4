package denormalize_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/crashtest"
	"github.com/tablekit/tablekit/integration/faults"
	"github.com/tablekit/tablekit/patterns/denormalize"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// userScenario is one placement of a relation for the seams of the
// caller's messages: where the source written lives, how a Copies is built
// over some clients, and how a fresh one recovers.
type userScenario struct {
	table  string // the sources' table
	pk, rk string // the source the write changes
	copies func(t testing.TB, e *integration.Env) *denormalize.Copies[Department, Employee]
	entry  func(t testing.TB, e *integration.Env) *denormalize.Copies[Entry, Employee]
	// recover relays and drains with healthy clients, the Notes handled.
	recover func(ctx context.Context, t testing.TB) error
	// check asserts the copies agree, read with plain clients.
	check func(t testing.TB)
	qs    []eventual.Queue
	notes *entity.Table[Delivered]
}

// modify is ModifySource of the scenario's source through the Copies
// built from e: it counts the change in Edits (by inc) and commits msgs.
func (s userScenario) modify(ctx context.Context, t testing.TB, e *integration.Env, phone string, inc int64, msgs ...eventual.Message) error {
	change := func(x *Employee) error { x.Phone = phone; x.Edits += inc; return nil }
	if s.copies != nil {
		_, err := s.copies(t, e).ModifySource(ctx, s.pk, s.rk, change, entity.ModifyOptions{}, withNotes(msgs...))
		return err
	}
	_, err := s.entry(t, e).ModifySource(ctx, s.pk, s.rk, change, entity.ModifyOptions{}, withNotes(msgs...))
	return err
}

// remove is DeleteSource of the scenario's source through the Copies
// built from e.
func (s userScenario) remove(ctx context.Context, t testing.TB, e *integration.Env, msgs ...eventual.Message) error {
	if s.copies != nil {
		return s.copies(t, e).DeleteSource(ctx, s.pk, s.rk, withNotes(msgs...))
	}
	return s.entry(t, e).DeleteSource(ctx, s.pk, s.rk, withNotes(msgs...))
}

// userScenarios prepares, for test t, the guide's partition (a
// SamePartition relation: the message commits with the source and its
// copy in the department) and the directory (OtherPartition: with the
// source and its fan-out's intent).
func userScenarios() map[string]func(t *testing.T) userScenario {
	return map[string]func(t *testing.T) userScenario{
		"SamePartition": func(t *testing.T) userScenario {
			g := newSameGuide(t)
			seedGuide(t, g.guide)
			return userScenario{
				table: g.emps.Name(), pk: "Sales", rk: empID(1), qs: g.qs, notes: g.notes,
				copies: func(t testing.TB, e *integration.Env) *denormalize.Copies[Department, Employee] {
					_, c := g.over(t, e)
					return c
				},
				recover: g.recover,
				check:   func(t testing.TB) { rawCheckGuide(t, g.emps.Name()) },
			}
		},
		"OtherPartition": func(t *testing.T) userScenario {
			d := newDirectory(t, env)
			d.seed(t, "Sales", 2, "CC-1")
			notes := patterntest.Table[Delivered](t, env)
			return userScenario{
				table: d.emps.Name(), pk: "Sales", rk: empID(0), qs: d.qs, notes: notes,
				entry: func(t testing.TB, e *integration.Env) *denormalize.Copies[Entry, Employee] {
					_, managers, _ := d.over(t, e, patterntest.Fast(), denormalize.Config{})
					return managers
				},
				recover: func(ctx context.Context, t testing.TB) error { return d.drainNotes(ctx, t, notes) },
				check:   func(t testing.TB) { rawCheckDirectory(t, d) },
			}
		},
	}
}

// TestUserMessageCrashMatrix kills a ModifySource that commits a message
// of the caller's after each of its storage requests in turn, before the
// request is sent and once the service executed it (crashtest.EveryStep):
// the read, (SamePartition) the read of the targets, the transaction, the
// enqueues, the intents' delete. Mid-way, plain clients find the message
// committed (an intent, or a queued message) exactly when the change is;
// after a fresh Copies relays and a fresh processor drains, the message
// was delivered — its effect applied once — exactly when the change
// committed, never when it did not, and nothing is left.
func TestUserMessageCrashMatrix(t *testing.T) {
	t.Parallel()
	for name, prepare := range userScenarios() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			crashtest.EveryStep(t, env, crashtest.Scenario{Prepare: func(t *testing.T) crashtest.Run {
				s := prepare(t)
				committed := func(t *testing.T) bool {
					row, ok := rawGet(t, s.table, s.pk, s.rk)
					if !ok {
						t.Fatalf("source %s/%s gone", s.pk, s.rk)
					}
					switch n := count(row, "Edits"); n {
					case 0, 1:
						return n == 1
					default:
						t.Fatalf("the change applied %d times", n)
					}
					return false
				}
				return crashtest.Run{
					Work: func(ctx context.Context, kenv *integration.Env) error {
						return s.modify(ctx, t, kenv, "op", 1, note(t, "m-op", "changed"))
					},
					Crashed: func(t *testing.T, passed int) {
						intent := slices.Contains(intentsLeft(t, s.table, s.pk), eventual.OutboxPrefix+"m-op")
						ids := queuedIDs(t, s.qs)
						sent := slices.Contains(ids, "m-op")
						switch c := committed(t); {
						case c && !intent && !sent:
							t.Errorf("after %d requests: the change committed, its message is neither an intent nor queued (queued %v)", passed, ids)
						case !c && (intent || len(ids) > 0):
							t.Errorf("after %d requests: the change did not commit, yet its message is committed (intent %v, queued %v)", passed, intent, ids)
						}
					},
					Recover: func(ctx context.Context) error { return s.recover(ctx, t) },
					Check: func(t *testing.T) {
						c := committed(t)
						effects, copies := delivered(t, s.notes.Name())
						_, got := effects["m-op"]
						if got != c {
							t.Errorf("change committed %v, its message delivered %v (effects %v)", c, got, effects)
						}
						for id := range copies {
							if id != "m-op" {
								t.Errorf("a message %q was delivered", id)
							}
						}
						if left := intentsLeft(t, s.table, s.pk); len(left) != 0 {
							t.Errorf("intents left: %v", left)
						}
						if work, poison := queued(t, s.qs); work+poison != 0 {
							t.Errorf("%d messages left, %d poisoned", work, poison)
						}
						s.check(t)
					},
				}
			}})
		})
	}
}

// TestUserMessageLostReply loses the reply to the transaction of a
// ModifySource that commits a message of the caller's; inside azcore's
// retry window another process replaces the source through its own
// Copies (with a message of its own), merges an uncopied property with a
// plain client, or deletes the source (with a message): the write is
// reported applied (or entity.ErrOutcomeUnknown, never refused), its
// change is applied once, and once relayed and drained its message was
// delivered exactly once — as was the other process's, when it
// succeeded — read back with plain clients.
func TestUserMessageLostReply(t *testing.T) {
	t.Parallel()
	for name, prepare := range userScenarios() {
		for _, comp := range []string{"replace", "merge", "delete"} {
			t.Run(name+"/"+comp, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				s := prepare(t)
				var compErr error
				compete := func() {
					switch comp {
					case "replace":
						compErr = s.modify(ctx, t, env, "c", 1000, note(t, "m-comp", "theirs"))
					case "merge":
						compErr = rawWrite(ctx, s.table, s.pk, s.rk, map[string]any{"Title": "comp"})
					case "delete":
						compErr = s.remove(ctx, t, env, note(t, "m-comp", "theirs"))
					}
				}
				inj := faults.New(faults.Config{})
				inj.LoseNextThen(1, isBatch, func(*http.Request) { compete() })
				err := s.modify(ctx, t, env.With(inj), "op", 1, note(t, "m-op", "mine"))
				if inj.Stats().LostReplies != 1 {
					t.Fatalf("%d replies lost, want 1", inj.Stats().LostReplies)
				}
				t.Logf("ModifySource: %v; the other process's %s: %v", err, comp, compErr)
				if err != nil && !errors.Is(err, entity.ErrOutcomeUnknown) {
					t.Fatalf("ModifySource, executed, its reply lost, with a %s in between: %v; want success or entity.ErrOutcomeUnknown", comp, err)
				}
				if compErr != nil {
					t.Fatalf("the other process's %s: %v", comp, compErr)
				}
				rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
				defer cancel()
				if err := s.recover(rctx, t); err != nil {
					t.Fatal(err)
				}
				effects, copies := delivered(t, s.notes.Name())
				if err == nil && (effects["m-op"] != "mine" || copies["m-op"] != 1) {
					t.Errorf("ModifySource reported applied: its message's effect %q, %d copies run; want once", effects["m-op"], copies["m-op"])
				}
				if copies["m-op"] > 1 {
					t.Errorf("ModifySource's message run %d times", copies["m-op"])
				}
				if comp != "merge" && (effects["m-comp"] != "theirs" || copies["m-comp"] != 1) {
					t.Errorf("the other process's message: effect %q, %d copies run; want once", effects["m-comp"], copies["m-comp"])
				}
				if row, ok := rawGet(t, s.table, s.pk, s.rk); ok {
					if n := count(row, "Edits") % 1000; n != 1 {
						t.Errorf("the change applied %d times: Edits %d", n, count(row, "Edits"))
					}
				} else if comp != "delete" {
					t.Errorf("the source is gone after a %s", comp)
				}
				if left := intentsLeft(t, s.table, s.pk); len(left) != 0 {
					t.Errorf("intents left: %v", left)
				}
				if work, poison := queued(t, s.qs); work+poison != 0 {
					t.Errorf("%d messages left, %d poisoned", work, poison)
				}
				s.check(t)
			})
		}
	}
}
