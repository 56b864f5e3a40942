// Data-parallel PPO (examples/ppo.rs --data-parallel, A2C and PPO
// objectives, f32) under Open MPI's mpirun: two processes with 4 of 8
// environments each (each environment's noise keyed by its place in the
// whole batch; advantage statistics and mean returns all-reduced;
// gradients all-reduced in one buffer per loss and iteration) end with the
// parameters of one process with all 8, within 1e-5 relative, every rank
// holding the same parameters; a run of the first 4 environments alone
// does not. Rank 0 prints the mean returns of the whole batch.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %example_bin/ppo --envs 8 --steps 8 --layers 1 --width 16 --iterations 4 --threads 1 --params %t/one > %t/one.out
// RUN: %example_bin/ppo --envs 4 --steps 8 --layers 1 --width 16 --iterations 4 --threads 1 --params %t/half > /dev/null
// RUN: env TEMPO_MPI_TIMEOUT=120 mpirun -np 2 --allow-run-as-root --oversubscribe --bind-to none %example_bin/ppo --envs 8 --steps 8 --layers 1 --width 16 --iterations 4 --threads 1 --data-parallel --params %t/two > %t/two.out
// RUN: %python %S/Inputs/compare_params.py %t/one %t/two.rank0 %t/two.rank1 --rtol 1e-5 --differs %t/half | FileCheck %s
// RUN: %python %S/Inputs/compare_lines.py %t/one.out %t/two.out mean_return 1e-5
// The PPO objective (2 epochs: a buffer per epoch's loss) on CartPole
// (f64), within 1e-9.
// RUN: %example_bin/ppo --env cartpole --objective ppo --epochs 2 --envs 8 --steps 8 --layers 1 --width 16 --iterations 3 --threads 1 --params %t/cp-one > %t/cp-one.out
// RUN: env TEMPO_MPI_TIMEOUT=120 mpirun -np 2 --allow-run-as-root --oversubscribe --bind-to none %example_bin/ppo --env cartpole --objective ppo --epochs 2 --envs 8 --steps 8 --layers 1 --width 16 --iterations 3 --threads 1 --data-parallel --params %t/cp-two > %t/cp-two.out
// RUN: %python %S/Inputs/compare_params.py %t/cp-one %t/cp-two.rank0 %t/cp-two.rank1 --rtol 1e-9 | FileCheck %s --check-prefix=CARTPOLE
// RUN: %python %S/Inputs/compare_lines.py %t/cp-one.out %t/cp-two.out mean_return 1e-9

// CHECK: ranks: 2, checksums equal: True
// CHECK-NEXT: parameters: {{[0-9]+}}, within rtol: True
// CHECK-NEXT: the other run differs: True

// CARTPOLE: ranks: 2, checksums equal: True
// CARTPOLE-NEXT: parameters: {{[0-9]+}}, within rtol: True
