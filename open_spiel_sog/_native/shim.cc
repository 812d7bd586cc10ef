// Copyright 2025 The open_spiel_sog Authors.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//      http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

// open_spiel_sog._native._shim: registers Python bot factories in OpenSpiel's
// C++ bot registry (open_spiel::BotRegisterer, which lives in pyspiel.so).
//
// It registers the C++ Scotland Yard (scotland_yard.h) in OpenSpiel's C++
// game registry (open_spiel::GameRegisterer, also in pyspiel.so), its map
// and parameters resolved by a Python callable
// (games/scotland_yard/native.py), and reads its states for Python.
//
// It also plays the rollout value function's uniform-random games in C++
// (`random_rollouts`; algorithms/sog/rollout_values.py falls back to the
// same generator in Python without the shim), and runs the passes of GT-CFR's
// regret update (cfr_kernels.h; algorithms/cfr/growing_passes.py has them in
// numpy too).
//
// After `register_bot(name, factory, can_play)`, pyspiel.load_bot(name, ...),
// pyspiel.registered_bots() and pyspiel.bots_that_can_play_game(...) see the
// bot exactly like a bot registered in C++.
//
// This module is compiled against the headers of the open_spiel wheel and the
// same pybind11 version, so it shares pybind11's internals (type registry)
// with pyspiel: Game, Bot and GameParameter convert between the two modules.
//
// Lifetime rules:
//  * PyBotFactory objects are owned by a static std::map inside pyspiel.so
//    that is destroyed by the C++ runtime at process exit, i.e. after Python
//    has been finalised. Their destructor therefore only touches Python
//    references when the interpreter is alive (taking the GIL); otherwise the
//    references are leaked on purpose.
//  * CanPlayGame/Create may be called from C++ code that released the GIL, so
//    both take it.
//  * Create transfers ownership of the Python bot to the returned
//    std::unique_ptr<Bot> (pybind11 smart_holder; the PyBot trampoline keeps
//    the Python half alive). A bot already owned by C++ cannot be transferred
//    twice; that is reported as a Python ValueError instead of a crash.
//  * Python exceptions raised by the factory or can_play propagate as
//    pybind11::error_already_set through OpenSpiel's C++ code back to the
//    Python caller with their original type.

#include <cstdint>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "open_spiel/game_parameters.h"
#include "open_spiel/python/pybind11/pybind11.h"
#include "open_spiel/spiel.h"
#include "open_spiel/spiel_bots.h"
#include "cfr_kernels.h"  // same folder
#include "history_engine.h"  // same folder
#include "rollouts.h"  // same folder
#include "scotland_yard.h"  // same folder
#include "scotland_yard_mcts.h"  // same folder

namespace open_spiel_sog {
namespace {

namespace py = ::pybind11;

using ::open_spiel::Bot;
using ::open_spiel::BotFactory;
using ::open_spiel::BotRegisterer;
using ::open_spiel::Game;
using ::open_spiel::GameParameters;
using ::open_spiel::Player;

// True while Python can safely run code (initialised and not finalising).
bool PythonIsAlive() {
  if (!Py_IsInitialized()) return false;
#if PY_VERSION_HEX >= 0x030D0000
  return !Py_IsFinalizing();
#else
  return !_Py_IsFinalizing();
#endif
}

// Names registered through this module during this process. Plain strings,
// so destroying this at exit never touches Python.
std::set<std::string>& NamesRegisteredHere() {
  static auto* names = new std::set<std::string>();
  return *names;
}

// Sets a Python exception of type `type` and throws it as error_already_set,
// which pybind11 (here or in pyspiel) turns back into the Python exception.
[[noreturn]] void ThrowPython(PyObject* type, const std::string& message) {
  PyErr_SetString(type, message.c_str());
  throw py::error_already_set();
}

// Converts a C++ game reference to a Python pyspiel.Game. Games are normally
// owned by a std::shared_ptr, in which case the existing Python object (if
// any) is reused; otherwise fall back to a non-owning reference.
py::object GameToPython(const Game& game) {
  std::shared_ptr<const Game> shared = game.weak_from_this().lock();
  if (shared != nullptr) return py::cast(std::move(shared));
  return py::cast(&game, py::return_value_policy::reference);
}

class PyBotFactory : public BotFactory {
 public:
  PyBotFactory(std::string name, py::object factory, py::object can_play)
      : name_(std::move(name)),
        factory_(std::move(factory)),
        can_play_(std::move(can_play)) {}

  PyBotFactory(const PyBotFactory&) = delete;
  PyBotFactory& operator=(const PyBotFactory&) = delete;

  ~PyBotFactory() override {
    if (PythonIsAlive()) {
      py::gil_scoped_acquire gil;
      factory_ = py::object();
      can_play_ = py::object();
    } else {
      // The interpreter is gone (static destruction at exit): decrementing
      // a reference count now would be undefined behaviour. Leak instead.
      factory_.release();
      can_play_.release();
    }
  }

  bool CanPlayGame(const Game& game, Player player_id) const override {
    py::gil_scoped_acquire gil;
    if (can_play_.is_none()) return true;
    py::object result = can_play_(GameToPython(game), player_id);
    int truth = PyObject_IsTrue(result.ptr());
    if (truth < 0) throw py::error_already_set();
    return truth != 0;
  }

  std::unique_ptr<Bot> Create(std::shared_ptr<const Game> game,
                              Player player_id,
                              const GameParameters& bot_params) const override {
    py::gil_scoped_acquire gil;
    // OpenSpiel's "name(k=v,...)" form passes the short name as a parameter;
    // factories only see the bot's own parameters.
    py::dict params;
    for (const auto& [key, value] : bot_params) {
      if (key == "name") continue;
      params[py::str(key)] = py::cast(value);
    }
    py::object bot = factory_(py::cast(std::move(game)), player_id, params);
    if (bot.is_none() || !py::isinstance<Bot>(bot)) {
      ThrowPython(PyExc_TypeError,
                  "bot factory for '" + name_ +
                      "' must return a pyspiel.Bot, got " +
                      std::string(py::str(py::type::of(bot).attr("__name__"))));
    }
    try {
      return py::cast<std::unique_ptr<Bot>>(std::move(bot));
    } catch (py::error_already_set& e) {
      throw;
    } catch (const std::exception& e) {
      // pybind11 refuses to transfer ownership of an instance that is
      // already owned by C++ (or shared elsewhere); report it clearly.
      ThrowPython(PyExc_ValueError,
                  "bot factory for '" + name_ +
                      "' returned a bot whose ownership cannot be transferred "
                      "to OpenSpiel (" + e.what() +
                      "); the factory must return a new bot each call");
    }
  }

 private:
  std::string name_;
  py::object factory_;
  py::object can_play_;
};

void RegisterBot(const std::string& name, py::object factory,
                 py::object can_play, bool replace) {
  if (name.empty() || name.find_first_of("(),=") != std::string::npos) {
    ThrowPython(PyExc_ValueError,
                "invalid bot name '" + name +
                    "': it must be non-empty and contain none of '(),='");
  }
  if (!PyCallable_Check(factory.ptr())) {
    ThrowPython(PyExc_TypeError, "bot factory for '" + name +
                                     "' must be callable");
  }
  if (!can_play.is_none() && !PyCallable_Check(can_play.ptr())) {
    ThrowPython(PyExc_TypeError,
                "can_play for '" + name + "' must be callable or None");
  }
  if (BotRegisterer::IsBotRegistered(name)) {
    const bool ours = NamesRegisteredHere().count(name) > 0;
    if (!ours) {
      ThrowPython(PyExc_ValueError,
                  "bot '" + name +
                      "' is already registered in OpenSpiel and was not "
                      "registered by open_spiel_sog; choose another name");
    }
    if (!replace) {
      ThrowPython(PyExc_ValueError,
                  "bot '" + name +
                      "' is already registered; pass replace=True to replace "
                      "it");
    }
  }
  // Replacing an entry destroys the previous factory here, with the GIL held.
  BotRegisterer::RegisterBot(
      name, std::make_unique<PyBotFactory>(name, std::move(factory),
                                           std::move(can_play)));
  NamesRegisteredHere().insert(name);
}

std::vector<std::string> RegisteredHere() {
  return {NamesRegisteredHere().begin(), NamesRegisteredHere().end()};
}

// Mean return of player 0 over `num_rollouts` uniform random games from
// `state` (rollouts.h's RandomRollout, which says how chance is sampled and
// what `max_moves` cuts). Returns the mean, the generator's next state and
// the actions played in all.
std::tuple<double, uint64_t, int64_t> RandomRollouts(
    const open_spiel::State& state, int num_rollouts, uint64_t rng,
    int64_t max_moves, double truncated_value) {
  if (num_rollouts < 1) {
    ThrowPython(PyExc_ValueError, "num_rollouts must be >= 1");
  }
  double total = 0.0;
  int64_t moves = 0;
  for (int k = 0; k < num_rollouts; ++k) {
    total += rollouts::RandomRollout(state, rng, max_moves, truncated_value,
                                     &moves);
  }
  return {total / num_rollouts, rng, moves};
}

// --- Scotland Yard (scotland_yard.h) ------------------------------------------

GameParameters ParametersFromPython(const py::dict& values) {
  GameParameters params;
  for (const auto& [key, value] : values) {
    const std::string name = py::cast<std::string>(key);
    if (py::isinstance<py::bool_>(value)) {
      params[name] = open_spiel::GameParameter(py::cast<bool>(value));
    } else if (py::isinstance<py::int_>(value)) {
      params[name] = open_spiel::GameParameter(py::cast<int>(value));
    } else if (py::isinstance<py::float_>(value)) {
      params[name] = open_spiel::GameParameter(py::cast<double>(value));
    } else {
      params[name] = open_spiel::GameParameter(py::cast<std::string>(value));
    }
  }
  return params;
}

// native.py's `cpp_setup` dict as a Setup.
std::shared_ptr<const scotland_yard::Setup> SetupFromPython(
    const py::dict& d) {
  auto setup = std::make_shared<scotland_yard::Setup>();
  setup->map_name = py::cast<std::string>(d["map_name"]);
  setup->labels = py::cast<std::vector<int>>(d["labels"]);
  setup->num_stations = static_cast<int>(setup->labels.size());
  setup->adjacency =
      py::cast<std::vector<std::vector<std::pair<int, int>>>>(d["adjacency"]);
  setup->mrx_start = py::cast<std::vector<int>>(d["mrx_start"]);
  setup->detective_starts = py::cast<std::vector<int>>(d["detective_starts"]);
  setup->detective_start_cards =
      py::cast<std::vector<int>>(d["detective_start_cards"]);
  setup->num_detectives = py::cast<int>(d["num_detectives"]);
  setup->detective_tickets =
      py::cast<std::array<int, 3>>(d["detective_tickets"]);
  setup->mrx_tickets = py::cast<std::array<int, 4>>(d["mrx_tickets"]);
  setup->doubles = py::cast<int>(d["doubles"]);
  setup->max_rounds = py::cast<int>(d["max_rounds"]);
  setup->reveal.assign(setup->max_rounds + 1, false);
  for (int r : py::cast<std::vector<int>>(d["reveal_rounds"])) {
    if (r >= 1 && r <= setup->max_rounds) setup->reveal[r] = true;
  }
  setup->tickets_to_mrx = py::cast<bool>(d["tickets_to_mrx"]);
  if (setup->num_stations < 1 ||
      static_cast<int>(setup->adjacency.size()) != setup->num_stations ||
      setup->mrx_start.empty() || setup->num_detectives < 1 ||
      (setup->detective_start_cards.empty() &&
       static_cast<int>(setup->detective_starts.size()) !=
           setup->num_detectives) ||
      (!setup->detective_start_cards.empty() &&
       static_cast<int>(setup->detective_start_cards.size()) <
           setup->num_detectives)) {
    ThrowPython(PyExc_ValueError, "scotland_yard: malformed set-up");
  }
  setup->Finish();
  return setup;
}

// Registers the C++ Scotland Yard under `short_name`. resolver(params) ->
// (the game's parameters, its set-up) runs for each game loaded; its
// exceptions reach the caller of pyspiel.load_game with their type.
void RegisterScotlandYard(const std::string& short_name,
                          const py::dict& specification, py::object resolver) {
  if (open_spiel::IsGameRegistered(short_name)) {
    ThrowPython(PyExc_ValueError,
                "game '" + short_name + "' is already registered");
  }
  if (!PyCallable_Check(resolver.ptr())) {
    ThrowPython(PyExc_TypeError, "the scotland_yard resolver must be callable");
  }
  open_spiel::GameType type = scotland_yard::GameTypeNamed(
      short_name, ParametersFromPython(specification));
  // Owned by OpenSpiel's static registry, destroyed after Python at exit:
  // the reference is leaked on purpose (as PyBotFactory does).
  auto* keep = new py::object(std::move(resolver));
  open_spiel::GameRegisterer::RegisterGame(
      type, [type, keep](const GameParameters& params)
                -> std::shared_ptr<const Game> {
        py::gil_scoped_acquire gil;
        py::dict given;
        for (const auto& [key, value] : params) {
          if (key == "name") continue;
          given[py::str(key)] = py::cast(value);
        }
        py::tuple resolved = (*keep)(given);
        return std::make_shared<scotland_yard::ScotlandYardGame>(
            type, ParametersFromPython(resolved[0]),
            SetupFromPython(resolved[1]));
      });
}

const scotland_yard::ScotlandYardState& AsScotlandYard(
    const open_spiel::State& state) {
  const auto* sy =
      dynamic_cast<const scotland_yard::ScotlandYardState*>(&state);
  if (sy == nullptr) {
    ThrowPython(PyExc_TypeError, "not a state of the C++ scotland_yard");
  }
  return *sy;
}

bool IsScotlandYardState(const open_spiel::State& state) {
  return dynamic_cast<const scotland_yard::ScotlandYardState*>(&state) !=
         nullptr;
}

// What the Python state holds (game.py's attributes), as plain values.
py::dict ScotlandYardView(const open_spiel::State& state) {
  const auto& s = AsScotlandYard(state);
  py::dict view;
  view["mrx"] = s.mrx();
  view["detectives"] = py::tuple(py::cast(s.detectives()));
  py::list tickets;
  for (const auto& t : s.detective_tickets()) {
    tickets.append(py::make_tuple(t[0], t[1], t[2]));
  }
  view["detective_tickets"] = py::tuple(tickets);
  const auto& m = s.mrx_tickets();
  view["mrx_tickets"] = py::make_tuple(m[0], m[1], m[2], m[3]);
  view["doubles"] = s.doubles();
  view["turn"] = s.turn();
  view["placed"] = s.placed();
  view["pending"] = s.pending();
  view["in_double"] = s.in_double();
  view["outcome"] = s.outcome();
  py::list log;
  for (const auto& e : s.log()) {
    log.append(py::make_tuple(e.ticket, e.revealed, e.in_double));
  }
  view["log"] = py::tuple(log);
  view["path"] = py::tuple(py::cast(s.path()));
  return view;
}

py::array_t<float> ScotlandYardCompactTensor(const open_spiel::State& state,
                                             int player) {
  std::vector<float> values = AsScotlandYard(state).CompactInfostateTensor(
      player);
  py::array_t<float> out(values.size());
  std::copy(values.begin(), values.end(), out.mutable_data());
  return out;
}

// Checks that this module shares pybind11's type registry with pyspiel (same
// internals ABI), without which no Game or Bot could cross the boundary.
void SelfCheck() {
  if (py::detail::get_type_info(typeid(Bot)) == nullptr ||
      py::detail::get_type_info(typeid(Game)) == nullptr) {
    ThrowPython(PyExc_ImportError,
                "pyspiel's Bot/Game types are not visible to the shim "
                "(pybind11 internals or C++ ABI mismatch)");
  }
  py::module_ pyspiel = py::module_::import("pyspiel");
  py::object game = pyspiel.attr("load_game")("tic_tac_toe");
  const Game& cpp_game = game.cast<const Game&>();
  if (cpp_game.NumPlayers() != 2) {
    ThrowPython(PyExc_ImportError, "shim and pyspiel disagree on Game layout");
  }
  py::object round_trip = GameToPython(cpp_game);
  if (!round_trip.is(game)) {
    ThrowPython(PyExc_ImportError,
                "shim could not map a C++ game back to its Python object");
  }
}

}  // namespace
}  // namespace open_spiel_sog

PYBIND11_MODULE(_shim, m) {
  namespace py = ::pybind11;
  // Bot, Game, GameParameter... are registered by pyspiel; make sure it is
  // initialised before any of them is converted.
  py::module_::import("pyspiel");
  m.doc() =
      "Registers Python bot factories in OpenSpiel's C++ bot registry; plays "
      "random rollouts.";
  m.def("register_bot", &open_spiel_sog::RegisterBot, py::arg("name"),
        py::arg("factory"), py::arg("can_play") = py::none(),
        py::arg("replace") = false,
        "Registers factory(game, player, params) -> pyspiel.Bot under name in "
        "OpenSpiel's C++ bot registry. can_play(game, player) -> bool or None "
        "(always playable). Raises ValueError if the name is taken, unless it "
        "was registered by this module and replace=True.");
  m.def("registered_here", &open_spiel_sog::RegisteredHere,
        "Names registered through this module, sorted.");
  m.def("random_rollouts", &open_spiel_sog::RandomRollouts, py::arg("state"),
        py::arg("num_rollouts"), py::arg("rng_state"), py::arg("max_moves") = 0,
        py::arg("truncated_value") = 0.0,
        "(mean return of player 0 over num_rollouts uniform-random games "
        "from state, next SplitMix64 state, actions played). With max_moves "
        "> 0 a game stops after that many actions and scores "
        "truncated_value.");
  m.def("register_scotland_yard", &open_spiel_sog::RegisterScotlandYard,
        py::arg("short_name"), py::arg("specification"), py::arg("resolver"),
        "Registers the C++ Scotland Yard under short_name in OpenSpiel's C++ "
        "game registry; resolver(params) -> (params, set-up dict) resolves "
        "each game's map and parameters (games/scotland_yard/native.py).");
  m.def("is_scotland_yard_state", &open_spiel_sog::IsScotlandYardState,
        py::arg("state"), "Whether state is a C++ scotland_yard state.");
  m.def("scotland_yard_view", &open_spiel_sog::ScotlandYardView,
        py::arg("state"),
        "A C++ scotland_yard state's fields (the Python state's attributes).");
  m.def("scotland_yard_compact_tensor",
        &open_spiel_sog::ScotlandYardCompactTensor, py::arg("state"),
        py::arg("player"),
        "The compact infostate tensor of a C++ scotland_yard state.");
  open_spiel_sog::cfr_kernels::Define(m);
  open_spiel_sog::history_engine::Define(m);
  open_spiel_sog::scotland_yard_mcts::Define(m,
                                             &open_spiel_sog::SetupFromPython);
  m.def("self_check", &open_spiel_sog::SelfCheck,
        "Raises ImportError if the shim cannot exchange objects with pyspiel.");
}
