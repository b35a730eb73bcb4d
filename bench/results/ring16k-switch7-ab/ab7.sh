#!/bin/bash
# ab7.sh OUT ROUNDS: old (da3bc20^) vs new genx ring forced vs tuned default, switch:7 cluster "ab7"
out=$1; rounds=$2; mkdir -p $out
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
od=$(ompi_info --parsable --path pkglibdir | sed -n 's/^path:pkglibdir://p')
for r in $(seq 1 $rounds); do
  cfgs=(old new tuned); s=$(( (r-1) % 3 )); cfgs=("${cfgs[@]:$s}" "${cfgs[@]:0:$s}")
  for cfg in "${cfgs[@]}"; do
    case $cfg in
      old) m="--mca mca_base_component_path ${OLD:-OLD_TREE}/build/.libs:$od --mca coll_genx_allreduce_algorithm ring";;
      new) m="--mca mca_base_component_path REPO/build/.libs:$od --mca coll_genx_allreduce_algorithm ring";;
      tuned) m="--mca coll ^genx";;
    esac
    python3 REPO/bench/genx-cluster --name ab7 run --timeout 300 -- mpirun -np 7 $m REPO/build/bench/genx-bench -m 4K:64K --max-time 0.5 -T float > $out/$cfg-$r.txt 2>&1
    echo "round $r $cfg rc=$?"
  done
done
