"""__APP_NAME__: a Streamlit dashboard scaffolded by Slipway (template: python-dashboard).

Run locally:  streamlit run app.py --server.port ${PORT:-__PORT__} --server.address 0.0.0.0
The data below is generated; replace `load_sales` with a query against your own source.
"""

from __future__ import annotations

from datetime import date, timedelta

import numpy as np
import pandas as pd
import streamlit as st

DISPLAY_NAME = "__DISPLAY_NAME__"
DESCRIPTION = "__DESCRIPTION__"
REGIONS = ["North", "South", "East", "West"]
PRODUCTS = ["Basic", "Plus", "Pro"]

st.set_page_config(page_title=DISPLAY_NAME, page_icon=":bar_chart:", layout="wide")


@st.cache_data
def load_sales(days: int, seed: int) -> pd.DataFrame:
    """Daily sales per region and product: a trend, weekly seasonality and noise."""
    rng = np.random.default_rng(seed)
    start = date.today() - timedelta(days=days - 1)
    dates = pd.date_range(start, periods=days, freq="D")
    frames = []
    for r, region in enumerate(REGIONS):
        for p, product in enumerate(PRODUCTS):
            base = 40 + 15 * r + 25 * p
            trend = np.linspace(0, 0.4 * base, days)
            weekly = 0.15 * base * np.sin(2 * np.pi * np.arange(days) / 7)
            units = np.maximum(0, base + trend + weekly + rng.normal(0, 0.1 * base, days)).round()
            price = 10.0 * (p + 1)
            frames.append(
                pd.DataFrame(
                    {
                        "date": dates,
                        "region": region,
                        "product": product,
                        "units": units.astype(int),
                        "revenue": units * price,
                    }
                )
            )
    return pd.concat(frames, ignore_index=True)


st.title(DISPLAY_NAME)
if DESCRIPTION:
    st.caption(DESCRIPTION)

with st.sidebar:
    st.header("Filters")
    days = st.slider("Days of history", min_value=14, max_value=365, value=90, step=7)
    regions = st.multiselect("Regions", REGIONS, default=REGIONS)
    products = st.multiselect("Products", PRODUCTS, default=PRODUCTS)
    seed = st.number_input("Random seed", min_value=0, value=42, step=1)

data = load_sales(days, int(seed))
view = data[data["region"].isin(regions) & data["product"].isin(products)]

if view.empty:
    st.warning("No data for this selection: pick at least one region and one product.")
    st.stop()

# Key figures, with the change against the previous half of the period.
half = view["date"].min() + (view["date"].max() - view["date"].min()) / 2
recent, earlier = view[view["date"] > half], view[view["date"] <= half]
c1, c2, c3 = st.columns(3)
c1.metric("Revenue", f"${view['revenue'].sum():,.0f}",
          f"{(recent['revenue'].sum() / max(earlier['revenue'].sum(), 1) - 1):+.1%}")
c2.metric("Units sold", f"{view['units'].sum():,}",
          f"{(recent['units'].sum() / max(earlier['units'].sum(), 1) - 1):+.1%}")
c3.metric("Average daily revenue", f"${view.groupby('date')['revenue'].sum().mean():,.0f}")

st.subheader("Daily revenue by region")
daily = view.pivot_table(index="date", columns="region", values="revenue", aggfunc="sum").fillna(0)
st.line_chart(daily)

left, right = st.columns(2)
with left:
    st.subheader("Revenue by product")
    st.bar_chart(view.groupby("product")["revenue"].sum())
with right:
    st.subheader("Summary by region")
    summary = (
        view.groupby("region")
        .agg(units=("units", "sum"), revenue=("revenue", "sum"), best_day=("revenue", "max"))
        .sort_values("revenue", ascending=False)
    )
    st.dataframe(summary)

with st.expander("Raw data"):
    st.dataframe(view.sort_values(["date", "region", "product"]), hide_index=True)
    st.download_button("Download CSV", view.to_csv(index=False), file_name="sales.csv", mime="text/csv")
