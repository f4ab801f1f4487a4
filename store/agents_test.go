package store

import (
	"context"
	"crypto/sha256"
	"errors"
	"testing"
	"time"
)

func TestAgentsAndPeople(t *testing.T) {
	t.Parallel()
	s, path := openTest(t, Options{})
	ctx := context.Background()
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	a := Agent{Name: "helper", User: "carol", ActFor: []string{"companion"}, Ask: true, Network: "off", Level: "read_only", KeySHA256: sha256.Sum256([]byte("k1")), Created: now}
	if err := s.AddAgent(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := s.AddAgent(ctx, Agent{Name: "helper", User: "x", Network: "ask", KeySHA256: sha256.Sum256([]byte("k2")), Created: now}); !errors.Is(err, ErrExists) {
		t.Errorf("same name: %v", err)
	}
	if err := s.AddAgent(ctx, Agent{Name: "other", User: "x", Network: "ask", KeySHA256: sha256.Sum256([]byte("k1")), Created: now}); !errors.Is(err, ErrExists) {
		t.Errorf("same key: %v", err)
	}
	if err := s.AddPerson(ctx, Person{ID: "carol", Name: "Carol", Created: now}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddPerson(ctx, Person{ID: "carol", Name: "C", Created: now}); !errors.Is(err, ErrExists) {
		t.Errorf("same person: %v", err)
	}
	s.TouchAgent(ctx, "helper", now.Add(time.Minute))
	s.TouchAgent(ctx, "from-config", now.Add(2*time.Minute))
	s.SetConfigAgentPaused(ctx, "from-config", true)
	s.SetConfigAgentLevel(ctx, "from-config", "trusted")
	s = reopen(t, s, path)

	list, err := s.Agents(ctx)
	if err != nil || len(list) != 1 {
		t.Fatalf("agents: %v %v", list, err)
	}
	got := list[0]
	if got.User != "carol" || !got.Ask || got.Network != "off" || got.Level != "read_only" || got.Paused || len(got.ActFor) != 1 || got.KeySHA256 != a.KeySHA256 || !got.LastUsed.Equal(now.Add(time.Minute)) {
		t.Errorf("agent read back: %+v", got)
	}
	got.Paused, got.User, got.Level = true, "companion", "ask"
	if ok, err := s.UpdateAgent(ctx, got); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if ok, err := s.SetAgentKey(ctx, "helper", sha256.Sum256([]byte("k3"))); !ok || err != nil {
		t.Fatal(ok, err)
	}
	list, _ = s.Agents(ctx)
	if !list[0].Paused || list[0].User != "companion" || list[0].Level != "ask" || list[0].KeySHA256 != sha256.Sum256([]byte("k3")) {
		t.Errorf("after update: %+v", list[0])
	}
	states, _ := s.AgentStates(ctx)
	if len(states) != 1 || states[0].Name != "from-config" || !states[0].Paused || states[0].Level != "trusted" || !states[0].LastUsed.Equal(now.Add(2*time.Minute)) {
		t.Errorf("config agent state: %+v", states)
	}
	if ok, _ := s.RenamePerson(ctx, "carol", "Caroline"); !ok {
		t.Error("rename found nobody")
	}
	people, _ := s.People(ctx)
	if len(people) != 1 || people[0].Name != "Caroline" {
		t.Errorf("people: %+v", people)
	}
	if ok, _ := s.RemoveAgent(ctx, "helper"); !ok {
		t.Error("remove found nothing")
	}
	if ok, _ := s.RemovePerson(ctx, "carol"); !ok {
		t.Error("remove person found nobody")
	}
	if list, _ := s.Agents(ctx); len(list) != 0 {
		t.Errorf("left: %+v", list)
	}
}
